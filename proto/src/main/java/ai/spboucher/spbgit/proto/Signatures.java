package ai.spboucher.spbgit.proto;

/**
 * How the gateway signs what it sends runners (docs/protocol.md, "Signed messages"): each {@link
 * JobRequest} and {@link CancelJob} carries, in the NATS header {@link #HEADER}, a JWS with a
 * detached payload (common's {@code DetachedJws}) over the message's exact bytes, signed with the
 * gateway's job-bus key, whose {@code typ} says which of the two it is.
 */
public final class Signatures {

  /** The NATS header holding the signature. */
  public static final String HEADER = "Spb-Signature";

  /** The {@code typ} of a signed {@link JobRequest}. */
  public static final String JOB_REQUEST = "spb-job-request";

  /** The {@code typ} of a signed {@link CancelJob}. */
  public static final String CANCEL_JOB = "spb-cancel-job";

  private Signatures() {}
}
