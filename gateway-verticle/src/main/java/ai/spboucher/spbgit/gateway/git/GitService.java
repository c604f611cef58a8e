package ai.spboucher.spbgit.gateway.git;

import java.util.Optional;

/** The two smart-HTTP services and their wire content types. */
enum GitService {
  UPLOAD_PACK("git-upload-pack"),
  RECEIVE_PACK("git-receive-pack");

  private final String serviceName;

  GitService(String serviceName) {
    this.serviceName = serviceName;
  }

  String serviceName() {
    return serviceName;
  }

  String advertisementType() {
    return "application/x-" + serviceName + "-advertisement";
  }

  String requestType() {
    return "application/x-" + serviceName + "-request";
  }

  String resultType() {
    return "application/x-" + serviceName + "-result";
  }

  static Optional<GitService> named(String name) {
    for (GitService s : values()) {
      if (s.serviceName.equals(name)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
