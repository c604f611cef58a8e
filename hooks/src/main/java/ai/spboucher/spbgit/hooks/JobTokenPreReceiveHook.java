package ai.spboucher.spbgit.hooks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.eclipse.jgit.transport.PreReceiveHook;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;

/**
 * The in-process pre-receive gate for pushes made with a job token: every command outside the token's
 * repository and ref scope is rejected with a reason naming the allowed scope. JGit calls it on the thread
 * running {@link ReceivePack#receive}, before any ref is updated.
 */
public final class JobTokenPreReceiveHook implements PreReceiveHook {

  private final JobTokenClaims claims;
  private final String repo;

  public JobTokenPreReceiveHook(JobTokenClaims claims, String repo) {
    this.claims = claims;
    this.repo = repo;
  }

  @Override
  public void onPreReceive(ReceivePack rp, Collection<ReceiveCommand> commands) {
    // Plain loops: this runs once per push, too rarely for the JIT to make stream pipelines cheap.
    List<ReceiveCommand> pending = new ArrayList<>(commands.size());
    List<String> refNames = new ArrayList<>(commands.size());
    for (ReceiveCommand command : commands) {
      if (command.getResult() == ReceiveCommand.Result.NOT_ATTEMPTED) {
        pending.add(command);
        refNames.add(command.getRefName());
      }
    }
    // During receive, JGit sets isAtomic() from the client's negotiated capabilities.
    boolean atomic = rp.isAtomic();
    List<PushGate.Verdict> verdicts = PushGate.evaluate(claims, repo, refNames, atomic);
    for (int i = 0; i < pending.size(); i++) {
      ReceiveCommand command = pending.get(i);
      verdicts.get(i).refusal()
          .ifPresent(reason -> command.setResult(ReceiveCommand.Result.REJECTED_OTHER_REASON, reason));
    }
  }
}
