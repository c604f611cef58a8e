package ai.spboucher.spbgit.gateway.jobs;

/** On the revised job: {@code revisedBy} now revises its work. */
record JobRevised(String job, String repo, String revisedBy, String requester)
    implements AuditEvent {}
