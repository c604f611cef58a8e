package ai.spboucher.spbgit.gateway.jobs;

import java.util.List;

/**
 * What an owner asks of a revision of a finished job's work, as the API received it: empty strings
 * for the fields left out.
 *
 * @param text what to change, in the owner's words; may be empty when comments say it
 * @param comments the ids of the job's review comments to address, or null for every comment on the
 *     work being revised (none outdated)
 * @param exec an exec-mode job's new command; empty for an llm-mode job
 * @param testCommand an exec-mode job's new test command; empty to keep the revised job's
 */
public record NewRevision(String text, List<Long> comments, String exec, String testCommand) {

  public NewRevision {
    comments = comments == null ? null : List.copyOf(comments);
  }

  public boolean isExec() {
    return !exec.isBlank();
  }
}
