-- A hand-made ascend_pytorch_profiler_2.db (torch_npu db export schema, only the tables and
-- columns stepscope reads): rank 2 on device 5 of a 4-rank job, one step. Times in ns.
-- By hand (docs in tests/ascend_db.rs): compute [1 020 000, 1 050 000), all-reduce
-- [1 040 000, 1 080 000), copy [1 085 000, 1 090 000); the all-reduce waits for peer 3 until
-- 1 070 000 (30 µs), for peers 0 and 1 a few hundred ns.
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO STRING_IDS VALUES
  (1, 'ProfilerStep#3'), (2, 'aten::mm'), (3, 'aclnnMm'), (4, 'HcclAllReduce'),
  (5, 'aclrtMemcpyAsync'), (6, 'KERNEL_AICORE'), (7, 'MatMulV2'), (8, 'AI_CORE'),
  (9, 'Notify_Wait'), (10, 'MEMCPY_ASYNC'), (11, 'hcom_allReduce__1_0_1'),
  (12, '1234567890'), (13, 'Enqueue'), (14, 'Notify Wait'), (15, 'aic_total_time'),
  (16, 'aic_mac_ratio'), (17, 'aic_mte2_ratio'), (18, 'aiv_total_time'), (19, 'Memcpy');
CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER,
  name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER,
  inputShapes INTEGER, callchainId INTEGER, type INTEGER, depth INTEGER);
INSERT INTO PYTORCH_API (startNs, endNs, globalTid, name, type) VALUES
  ('1000000', '1100000', 30064771142, 1, 50001),
  ('1005000', '1010000', 30064771142, 2, 50001),
  ('1010500', '1011000', 30064771142, 13, 50002),
  ('1005500', '1005600', 30064771142, 2, 50003);
CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER,
  connectionId INTEGER PRIMARY KEY, name INTEGER, depth INTEGER);
INSERT INTO CANN_API (startNs, endNs, type, globalTid, connectionId, name) VALUES
  (1006000, 1007000, 20000, 30064771142, 11, 3),
  (1012000, 1013000, 20000, 30064771142, 12, 4),
  (1084000, 1084500, 20000, 30064771142, 13, 5);
CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
  globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
  streamId INTEGER, taskId INTEGER, modelId INTEGER, depth INTEGER);
INSERT INTO TASK (startNs, endNs, deviceId, connectionId, globalTaskId, taskType, streamId) VALUES
  (1020000, 1050000, 5, 11, 1, 6, 2),
  (1040000, 1080000, 5, 12, 2, 8, 4),
  (1040100, 1070000, 5, 12, 3, 14, 4),
  (1040200, 1040300, 5, 12, 4, 14, 4),
  (1040300, 1040400, 5, 12, 5, 14, 4),
  (1072000, 1074000, 5, 12, 7, 19, 4),
  (1071000, 1076000, 5, 12, 8, 19, 4),
  (1085000, 1090000, 5, 13, 6, 10, 3);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY,
  blockDim INTEGER, mixBlockDim INTEGER, taskType INTEGER, opType INTEGER);
INSERT INTO COMPUTE_TASK_INFO (name, globalTaskId, taskType, opType, blockDim)
  VALUES (7, 1, 8, 7, 24);
-- The PMU's counters of that task, in long form: the cube ran it (mac 91%, MTE2 40%).
CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER, name INTEGER, value NUMERIC);
INSERT INTO TASK_PMU_INFO VALUES (1, 15, 29000.5), (1, 16, 0.91), (1, 17, 0.4), (1, 18, 0);
CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER, globalTaskId INTEGER, taskType INTEGER,
  planeId INTEGER, groupName INTEGER, notifyId INTEGER, rdmaType INTEGER, srcRank INTEGER,
  dstRank INTEGER, transportType INTEGER, size INTEGER, dataType INTEGER, linkType INTEGER,
  opId INTEGER);
INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, taskType, planeId, groupName,
  srcRank, dstRank, opId) VALUES
  (11, 3, 9, 2, 12, 2, 3, 1),
  (11, 4, 9, 0, 12, 2, 0, 1),
  (11, 5, 9, 1, 12, 2, 1, 1);
-- Two copies over HCCS (transport 0 = SDMA, from torch_npu's fixed values: this db has no
-- ENUM_HCCL_TRANSPORT_TYPE): 8192 B aligned, 8000 B not, running 2 µs past the first.
INSERT INTO COMMUNICATION_TASK_INFO (name, globalTaskId, taskType, planeId, groupName,
  srcRank, dstRank, transportType, size, linkType, opId) VALUES
  (11, 7, 19, 0, 12, 2, 3, 0, 8192, 1, 1),
  (11, 8, 19, 1, 12, 2, 3, 0, 8000, 1, 1);
CREATE TABLE ENUM_HCCL_LINK_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_LINK_TYPE VALUES (0, 'ON_CHIP'), (1, 'HCCS'), (65534, 'N/A');
CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO ENUM_HCCL_DATA_TYPE VALUES (4, 'FP32'), (11, 'BFP16');
CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,
  connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER,
  retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER,
  waitNs INTEGER);
INSERT INTO COMMUNICATION_OP (opName, startNs, endNs, connectionId, groupName, opId, dataType,
  count) VALUES (11, 1040000, 1080000, 12, 12, 1, 4, 1024);
CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
INSERT INTO RANK_DEVICE_MAP VALUES (2, 5);
CREATE TABLE NPU_INFO (id INTEGER, name TEXT);
INSERT INTO NPU_INFO VALUES (5, 'Ascend910B');
