package ai.spboucher.spbgit.gateway.review;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Computed diffs (their encoded JSON) by {@link DiffTarget#cacheKey()}, least recently used first
 * out, bounded by their total length and their count. A diff is a function of its commits, so an
 * entry never goes stale.
 *
 * <p>Threading: thread-safe.
 */
final class DiffCache {

  private final long maxChars;
  private final int maxEntries;
  private final LinkedHashMap<String, String> entries = new LinkedHashMap<>(16, 0.75f, true);
  private long chars;

  DiffCache(long maxChars, int maxEntries) {
    this.maxChars = maxChars;
    this.maxEntries = maxEntries;
  }

  synchronized String get(String key) {
    return entries.get(key);
  }

  /** Keeps {@code json} unless it alone would take more than a quarter of the cache. */
  synchronized void put(String key, String json) {
    if (json.length() > maxChars / 4) {
      return;
    }
    String previous = entries.put(key, json);
    chars += json.length() - (previous == null ? 0 : previous.length());
    Iterator<Map.Entry<String, String>> eldest = entries.entrySet().iterator();
    while ((chars > maxChars || entries.size() > maxEntries) && eldest.hasNext()) {
      chars -= eldest.next().getValue().length();
      eldest.remove();
    }
  }

  synchronized int size() {
    return entries.size();
  }
}
