package ai.spboucher.spbgit.gateway.environment;

/**
 * {@code AGENTS.md} on the default branch cannot be given to the built-in agent; the message names
 * the file and the problem, e.g. {@code AGENTS.md on the default branch is larger than 32 KiB}.
 */
public final class InstructionsFileException extends RuntimeException {

  InstructionsFileException(String problem) {
    super(RepositoryInstructions.PATH + " on the default branch " + problem);
  }
}
