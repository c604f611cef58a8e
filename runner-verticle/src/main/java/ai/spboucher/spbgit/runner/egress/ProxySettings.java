package ai.spboucher.spbgit.runner.egress;

import java.time.Duration;

/** What one {@link EgressProxy} was started with; validated by {@link EgressProxy.Builder}. */
record ProxySettings(
    EgressPolicy policy,
    EgressRecorder recorder,
    int maxConnections,
    int maxHeadBytes,
    Duration headTimeout,
    Duration connectTimeout,
    boolean refuseLocalResolutions) {}
