package ai.spboucher.spbgit.cli;

/**
 * Whether colour sequences in job logs reach the terminal: {@code auto} keeps them only on a
 * terminal.
 */
public enum ColorMode {
  auto,
  always,
  never
}
