package ai.spboucher.spbgit.hooks;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.transport.PreReceiveHook;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;

/**
 * The in-process pre-receive gate for pushes made with a job token: every command {@link PushGate}
 * refuses (outside the token's repository and ref scope, over the job's ref limits, not pointing at
 * a commit) is rejected with a reason naming the rule. JGit calls it on the thread running {@link
 * ReceivePack#receive}, before any ref is updated and after the pushed objects were stored, so
 * their types can be read.
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
    List<PushGate.Update> updates = new ArrayList<>(commands.size());
    Set<String> existing = new HashSet<>();
    try {
      for (Ref ref :
          rp.getRepository().getRefDatabase().getRefsByPrefix(claims.refScope().prefix())) {
        existing.add(ref.getName());
      }
      ObjectReader reader = rp.getRevWalk().getObjectReader();
      for (ReceiveCommand command : commands) {
        if (command.getResult() == ReceiveCommand.Result.NOT_ATTEMPTED) {
          pending.add(command);
          updates.add(
              new PushGate.Update(command.getRefName(), RefTarget.of(reader, command.getNewId())));
        }
      }
    } catch (IOException e) {
      // Fail closed: a push the gate could not check is refused as a whole.
      for (ReceiveCommand command : commands) {
        if (command.getResult() == ReceiveCommand.Result.NOT_ATTEMPTED) {
          command.setResult(
              ReceiveCommand.Result.REJECTED_OTHER_REASON,
              "cannot read the repository to check the " + "push: " + e.getMessage());
        }
      }
      return;
    }
    // During receive, JGit sets isAtomic() from the client's negotiated capabilities.
    boolean atomic = rp.isAtomic();
    List<PushGate.Verdict> verdicts = PushGate.evaluate(claims, repo, updates, existing, atomic);
    for (int i = 0; i < pending.size(); i++) {
      ReceiveCommand command = pending.get(i);
      verdicts
          .get(i)
          .refusal()
          .ifPresent(
              reason -> command.setResult(ReceiveCommand.Result.REJECTED_OTHER_REASON, reason));
    }
  }
}
