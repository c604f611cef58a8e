package ai.spboucher.spbgit.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Medians: on a shared machine a few runs slowed down by other work must not move the result. */
final class Stats {

  private Stats() {}

  static double median(List<Double> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no values");
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int mid = sorted.size() / 2;
    return sorted.size() % 2 == 1 ? sorted.get(mid) : (sorted.get(mid - 1) + sorted.get(mid)) / 2;
  }
}
