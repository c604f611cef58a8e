package ai.spboucher.spbgit.benchmarks.system;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Order statistics of a sample (nearest-rank percentiles, so every figure is a value that was
 * measured).
 */
record Stats(int count, double min, double p50, double p95, double p99, double max, double mean) {

  static Stats of(Collection<? extends Number> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("no samples");
    }
    List<Double> sorted = new ArrayList<>(values.size());
    values.forEach(v -> sorted.add(v.doubleValue()));
    sorted.sort(null);
    double sum = 0;
    for (double v : sorted) {
      sum += v;
    }
    return new Stats(
        sorted.size(),
        sorted.get(0),
        rank(sorted, 50),
        rank(sorted, 95),
        rank(sorted, 99),
        sorted.get(sorted.size() - 1),
        sum / sorted.size());
  }

  /** The median of a few per-run figures (the middle one, or the mean of the two middle ones). */
  static double median(Collection<? extends Number> values) {
    List<Double> sorted = new ArrayList<>();
    values.forEach(v -> sorted.add(v.doubleValue()));
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static double rank(List<Double> sorted, double percentile) {
    int index = (int) Math.ceil(percentile / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }

  String describe(String unit) {
    return String.format(
        Locale.ROOT,
        "n=%d p50=%.1f p95=%.1f p99=%.1f max=%.1f min=%.1f %s",
        count,
        p50,
        p95,
        p99,
        max,
        min,
        unit);
  }
}
