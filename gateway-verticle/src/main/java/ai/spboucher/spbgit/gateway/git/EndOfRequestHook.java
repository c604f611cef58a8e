package ai.spboucher.spbgit.gateway.git;

import java.io.IOException;
import java.io.InputStream;
import java.util.Collection;
import org.eclipse.jgit.transport.PreReceiveHook;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;

/**
 * Refuses a push whose request body goes on after the push itself, before any ref is updated. JGit
 * reads no pack for a push that only deletes refs and ignores whatever follows its commands (even a
 * corrupt gzip stream), so without this a malformed body could still delete refs. After a pack JGit
 * has already checked for the end. Runs on the thread running {@link ReceivePack#receive}, and may
 * block until the rest of the body arrives.
 */
final class EndOfRequestHook implements PreReceiveHook {

  private final InputStream body;

  /**
   * @param body the request body JGit reads the push from
   */
  EndOfRequestHook(InputStream body) {
    this.body = body;
  }

  @Override
  public void onPreReceive(ReceivePack rp, Collection<ReceiveCommand> commands) {
    int next;
    try {
      next = body.read();
    } catch (IOException e) {
      throw new MalformedGitRequestException("malformed request body: " + e.getMessage());
    }
    if (next >= 0) {
      // Thrown, not a per-command refusal: the request as a whole is malformed, so it gets a 400.
      throw new MalformedGitRequestException("request body goes on after the push");
    }
  }
}
