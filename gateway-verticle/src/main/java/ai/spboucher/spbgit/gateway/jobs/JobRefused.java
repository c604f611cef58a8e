package ai.spboucher.spbgit.gateway.jobs;

/**
 * A runner refused a request for the job (forged, altered, replayed...): recorded for the owner's
 * eyes, it changes nothing about the job (the genuine request may still run; a replay of a finished
 * job's leaves it finished).
 */
record JobRefused(String job, String repo, String runner, String reason) implements AuditEvent {}
