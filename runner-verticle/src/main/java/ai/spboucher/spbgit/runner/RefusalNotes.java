package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Puts the job's refused egress attempts into its log as runner lines, next to what the job printed
 * about them, so a reader of the log sees what the sandbox stopped. The first {@link #LOGGED} are
 * written; after that one line says the rest are on the proposal page only (every attempt is
 * published as an egress event anyway).
 *
 * <p>Threading: {@link #note} is called on the egress proxy's and git relay's event loops; it never
 * blocks.
 */
final class RefusalNotes {

  static final int LOGGED = 20;

  private final LogPump pump;
  private final AtomicInteger refused = new AtomicInteger();

  RefusalNotes(LogPump pump) {
    this.pump = pump;
  }

  void note(EgressRecord record) {
    if (record.allowed()) {
      return;
    }
    int count = refused.incrementAndGet();
    if (count <= LOGGED) {
      pump.offerRunnerLine(
          "egress refused: "
              + record.method()
              + " "
              + record.target()
              + " ("
              + record.failure()
              + ")");
    } else if (count == LOGGED + 1) {
      pump.offerRunnerLine(
          "more egress refused: further attempts are listed with the job's egress record only");
    }
  }
}
