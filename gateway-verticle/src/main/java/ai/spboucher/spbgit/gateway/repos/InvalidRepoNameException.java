package ai.spboucher.spbgit.gateway.repos;

/** A repository name broke the naming rules; maps to 400. */
public final class InvalidRepoNameException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  InvalidRepoNameException(String name) {
    super(
        "invalid repository name"
            + (name == null ? "" : " '" + printable(name) + "'")
            + ": use 1-100 of A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..' or a .git/.lock suffix");
  }

  private static String printable(String name) {
    String shown = name.length() > 120 ? name.substring(0, 120) + "..." : name;
    return shown.replaceAll("\\p{Cntrl}", "?");
  }
}
