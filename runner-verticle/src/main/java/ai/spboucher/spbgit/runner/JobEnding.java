package ai.spboucher.spbgit.runner;

/**
 * How a phase before the agent's ended the job: its exit reason and the FINISHED event's detail.
 */
record JobEnding(String reason, String detail) {}
