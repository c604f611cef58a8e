package ai.spboucher.spbgit.gateway.review;

import org.eclipse.jgit.diff.DiffAlgorithm;
import org.eclipse.jgit.diff.Edit;
import org.eclipse.jgit.diff.EditList;
import org.eclipse.jgit.diff.HistogramDiff;
import org.eclipse.jgit.diff.MyersDiff;
import org.eclipse.jgit.diff.Sequence;
import org.eclipse.jgit.diff.SequenceComparator;

/**
 * JGit's histogram diff (git's, with Myers' O(ND) diff where histogram gives up on lines that
 * repeat too often), stopped by a {@link DiffAllowance}: every few thousand line comparisons it
 * checks the clock and the cancel flag. It also keeps the edit list of the last file it diffed, for
 * the file's addition and deletion counts.
 *
 * <p>Threading: one instance per file diff, on the computing thread.
 */
final class BudgetedDiff extends DiffAlgorithm {

  /** Comparisons between checks: a check reads the clock, a comparison costs a few nanoseconds. */
  private static final int CHECK_EVERY = 1 << 10;

  private final DiffAllowance allowance;
  private final HistogramDiff histogram = new HistogramDiff();
  private EditList edits;

  BudgetedDiff(DiffAllowance allowance) {
    this.allowance = allowance;
    histogram.setFallbackAlgorithm(new CountedMyers());
  }

  /** The edits of the last diff, or null when nothing was diffed (a binary file, a pure rename). */
  EditList edits() {
    return edits;
  }

  @Override
  public <S extends Sequence> EditList diff(SequenceComparator<? super S> cmp, S a, S b) {
    edits = super.diff(new Counted<S>(cmp, false), a, b);
    return edits;
  }

  @Override
  public <S extends Sequence> EditList diffNonCommon(SequenceComparator<? super S> cmp, S a, S b) {
    return histogram.diffNonCommon(cmp, a, b);
  }

  /** Myers' diff with every comparison counted. */
  private final class CountedMyers extends DiffAlgorithm {
    @Override
    public <S extends Sequence> EditList diffNonCommon(
        SequenceComparator<? super S> cmp, S a, S b) {
      // Myers compares hashes before calling the comparator; with a constant hash every comparison
      // reaches it, so
      // a region of lines that never match (no comparator call at all otherwise) is counted too.
      // The comparator
      // it wraps still compares the real hashes first, so this costs a call, not a line comparison.
      return MyersDiff.INSTANCE.diffNonCommon(new Counted<S>(cmp, true), a, b);
    }
  }

  private final class Counted<S extends Sequence> extends SequenceComparator<S> {
    private final SequenceComparator<? super S> cmp;
    private final boolean constantHash;
    private int calls;

    Counted(SequenceComparator<? super S> cmp, boolean constantHash) {
      this.cmp = cmp;
      this.constantHash = constantHash;
    }

    @Override
    public boolean equals(S a, int ai, S b, int bi) {
      if (++calls % CHECK_EVERY == 0) {
        allowance.check();
      }
      return cmp.equals(a, ai, b, bi);
    }

    @Override
    public int hash(S seq, int ptr) {
      return constantHash ? 0 : cmp.hash(seq, ptr);
    }

    @Override
    public Edit reduceCommonStartEnd(S a, S b, Edit e) {
      return cmp.reduceCommonStartEnd(a, b, e);
    }
  }
}
