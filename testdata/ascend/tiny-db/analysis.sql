-- The hand-made rank's analysis.db: torch_npu's step summary of step 3, in µs (NUMERIC, as
-- torch_npu writes it). Device window [1 020 000, 1 080 000): compute 30, communication 40,
-- of it 10 under compute; the copy is outside the window (torch_npu's window ignores copies).
CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, communication_not_overlapped NUMERIC,
  overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC, bubble NUMERIC,
  communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC);
INSERT INTO StepTraceTime VALUES ('3', 30.0, 30, 10, 40.000, 0, 60, 0, 30, 20.0);
