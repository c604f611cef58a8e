package ai.spboucher.spbgit.gateway.environment;

/**
 * {@code .spbgit/agent.yml} cannot be used: its message names the file, the line (1-based) and the
 * key at fault, e.g. {@code .spbgit/agent.yml line 4: 'setup_egress' must be a list of host:port
 * strings}.
 */
public final class EnvironmentFileException extends RuntimeException {

  private final String key;
  private final int line;

  EnvironmentFileException(String key, int line, String problem) {
    super(
        EnvironmentFile.PATH
            + (line > 0 ? " line " + line : "")
            + ": "
            + (key == null ? "" : "'" + key + "' ")
            + problem);
    this.key = key;
    this.line = line;
  }

  /** The key at fault, or null for a problem with the file as a whole. */
  public String key() {
    return key;
  }

  /** The 1-based line of the problem, or 0 when it has none. */
  public int line() {
    return line;
  }
}
