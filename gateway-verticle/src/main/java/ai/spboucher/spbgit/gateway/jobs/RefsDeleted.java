package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonArray;

/** The owner deleted the job's refs ({@code refs}: the names that went). */
record RefsDeleted(String job, String repo, JsonArray refs, String by) implements AuditEvent {}
