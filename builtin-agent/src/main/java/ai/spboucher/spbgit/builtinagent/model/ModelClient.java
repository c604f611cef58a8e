package ai.spboucher.spbgit.builtinagent.model;

import java.util.List;

/** A chat model with tool use. Called from the agent loop's single thread only. */
public interface ModelClient {

  /**
   * Sends the whole transcript and returns the model's next reply.
   *
   * @throws BudgetExceededException the runner's proxy refused: the job's token budget is spent
   * @throws StopRequestedException the runner signalled a breach while waiting
   * @throws ProviderException anything else went wrong; the message says what, for the log
   */
  Message.AssistantTurn next(List<Message> transcript)
      throws ProviderException, BudgetExceededException, StopRequestedException;
}
