"""HTA's equivalent of `stepscope diff`: TraceDiff.compare_traces of two trace directories
(HolisticTraceAnalysis; its defaults: the first rank and the first iteration of each), the
operator/kernel counts and durations side by side. Used by scripts/bench-diff.sh;
`pip install HolisticTraceAnalysis psutil` first."""
import logging
import sys

logging.disable(logging.WARNING)
from hta.trace_diff import TraceDiff  # noqa: E402

df = TraceDiff.compare_traces(sys.argv[1], sys.argv[2])
print(len(df), "rows")
print(df.sort_values("diff_duration", key=abs, ascending=False).head(10).to_string())
