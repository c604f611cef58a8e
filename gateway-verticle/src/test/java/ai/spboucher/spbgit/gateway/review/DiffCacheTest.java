package ai.spboucher.spbgit.gateway.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class DiffCacheTest {

  @Test
  void evictsTheLeastRecentlyUsedPastItsLength() {
    DiffCache cache = new DiffCache(100, 10);
    cache.put("a", "x".repeat(25));
    cache.put("b", "y".repeat(25));
    cache.put("c", "z".repeat(25));
    cache.get("a");
    cache.put("d", "w".repeat(25));
    cache.put("e", "v".repeat(25));
    assertNull(cache.get("b"), "the least recently used went first");
    assertEquals("x".repeat(25), cache.get("a"), "a read keeps an entry");
    assertEquals(4, cache.size());
  }

  @Test
  void evictsPastItsCount() {
    DiffCache cache = new DiffCache(1_000, 2);
    cache.put("a", "1");
    cache.put("b", "2");
    cache.put("c", "3");
    assertNull(cache.get("a"));
    assertEquals(2, cache.size());
  }

  @Test
  void keepsNothingThatWouldTakeAQuarterOfIt() {
    DiffCache cache = new DiffCache(100, 10);
    cache.put("huge", "x".repeat(26));
    assertNull(cache.get("huge"));
  }
}
