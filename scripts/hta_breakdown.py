"""HTA's equivalent of `stepscope report`: load a trace directory and compute the temporal
breakdown (HolisticTraceAnalysis: TraceAnalysis + get_temporal_breakdown). Used by
scripts/bench-load.sh; `pip install HolisticTraceAnalysis psutil` first."""
import logging
import sys

logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis  # noqa: E402

analysis = TraceAnalysis(trace_dir=sys.argv[1])
print(analysis.get_temporal_breakdown(visualize=False).to_string())
