package ai.spboucher.spbgit.gateway.git;

import java.time.Duration;

/**
 * What one git request may cost the gateway, from its configuration.
 *
 * @param maxPushBytes the largest receive-pack request body (and pack) accepted, after
 *     decompression
 * @param maxObjectBytes the largest single object accepted in a push
 * @param maxPushInflatedBytes the bytes one push may inflate in all (objects, delta instructions
 *     and the objects deltas build): a small pack of deltas can expand to gigabytes
 * @param maxDeltaDepth the longest delta chain a push may store
 * @param pushTimeLimit the wall-clock time one push may take, upload included
 */
public record GitLimits(
    long maxPushBytes,
    long maxObjectBytes,
    long maxPushInflatedBytes,
    int maxDeltaDepth,
    Duration pushTimeLimit) {}
