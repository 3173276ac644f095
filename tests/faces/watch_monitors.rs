//! `stepscope watch` on GPU/NPU monitor streams: every shared monitor capture replayed through
//! a pipe (devices and readings checked by hand against the files), and a dmon stream built
//! on the real legacy header with an idle, an odd-one-out and a throttled device injected.

use crate::common;

use common::replay::{log, of_type, replay};
use common::shared;
use serde_json::Value;

/// The device records of a replay: (device, metric → value).
fn samples(v: &[Value]) -> Vec<(String, serde_json::Map<String, Value>)> {
    of_type(v, "record")
        .into_iter()
        .filter(|r| r["kind"] == "device")
        .map(|r| {
            let m = r["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_str().unwrap().to_string(), p[1].clone()))
                .collect();
            (r["device"].as_str().unwrap().to_string(), m)
        })
        .collect()
}

#[test]
fn every_shared_monitor_capture_gives_its_devices_and_readings() {
    let Some(s) = shared() else { return };
    let dmon = samples(&replay(&log(
        &s,
        "gpu-monitors/nvidia_smi_dmon_legacy_DeepSpeech_issue178.txt",
    )));
    // Four rows under the 2016 header: `sm` is utilisation, `pclk` the SM clock, `fb` MiB.
    assert_eq!(dmon.len(), 4);
    assert_eq!(dmon[0].0, "GPU 0");
    assert_eq!(dmon[0].1["util_pct"], 25.0);
    assert_eq!(dmon[0].1["power_w"], 111.0);
    assert_eq!(dmon[0].1["sm_clock_mhz"], 1683.0);
    assert_eq!(dmon[3].1["mem_used_mib"], 11660.0);
    let csv = samples(&replay(&log(
        &s,
        "gpu-monitors/nvidia_smi_query_gpu_csv_bpytop_issue26.txt",
    )));
    let names: Vec<&str> = csv.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(names, ["GeForce GTX 1080 Ti", "GeForce GTX 1060 6GB"]);
    assert_eq!(csv[0].1["util_pct"], 36.0);
    assert_eq!(csv[1].1["power_w"], 5.68);
    let dcgmi = samples(&replay(&log(
        &s,
        "gpu-monitors/dcgmi_dmon_DCGM_issue151.txt",
    )));
    assert_eq!(dcgmi.len(), 7);
    let i28 = dcgmi.iter().find(|d| d.0 == "GPU-I 28").unwrap();
    assert_eq!(i28.1["util_pct"], 99.3); // GRACT 0.993
    let npu = samples(&replay(&log(
        &s,
        "gpu-monitors/npu_smi_info_watch_hiascend_docs.txt",
    )));
    // Three samples, two of them identical rows: successive samples, not duplicates.
    assert_eq!(npu.len(), 3);
    assert_eq!(npu[2].1["mem_pct"], 32.0);
    let v = replay(&log(&s, "gpu-monitors/dcgm_exporter_metrics_issue250.prom"));
    let hosts: Vec<&Value> = of_type(&v, "record")
        .into_iter()
        .filter(|r| r["kind"] == "device")
        .map(|r| &r["host"])
        .collect();
    assert!(!hosts.is_empty() && hosts.iter().all(|h| *h == "r6i3n0"));
    let blank = samples(&replay(&log(
        &s,
        "gpu-monitors/dcgm_exporter_readme_quickstart.prom",
    )));
    // MEMORY_TEMP's 9223372036854775794 is DCGM's "blank" sentinel: no reading.
    assert!(blank.iter().all(|d| !d.1.contains_key("mem_temp_c")));
    assert_eq!(blank[0].1["sm_clock_mhz"], 139.0);
    // None of these short captures holds a sustained condition: no alert.
    assert!(of_type(&v, "alert").is_empty());
}

#[test]
fn an_idle_an_odd_and_a_throttled_device_are_each_alerted_once() {
    let Some(s) = shared() else { return };
    let real = String::from_utf8(log(
        &s,
        "gpu-monitors/nvidia_smi_dmon_legacy_DeepSpeech_issue178.txt",
    ))
    .unwrap();
    let mut text: String = real.lines().take(2).map(|l| format!("{l}\n")).collect();
    // 12 rounds of 4 GPUs. From round 4 GPU 3 computes nothing but keeps 11660 MiB; from
    // round 6 GPU 1 runs at 1400 MHz (its best while busy: 1733) at 90%.
    for round in 0..12 {
        for gpu in 0..4 {
            let sm = if gpu == 3 && round >= 4 { 0 } else { 90 };
            let pclk = if gpu == 1 && round >= 6 { 1400 } else { 1733 };
            text.push_str(&format!(
                "    {gpu}   111    83    {sm}     7     0     0  4513  {pclk}     0     0 11660     2     -     -     0    41     8\n"
            ));
        }
    }
    let v = replay(text.as_bytes());
    let alerts: Vec<(String, String)> = of_type(&v, "alert")
        .iter()
        .map(|a| {
            (
                a["rule"].as_str().unwrap().to_string(),
                a["devices"][0].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // GPU 3: idle (0% ≤ 5%, 11660 MiB ≥ 1 GiB, busy before) and 90 points below its peers'
    // median, both from round 4: alerted at their 5th sample (round 8). GPU 1: below 0.9 ×
    // 1733 = 1559.7 MHz while busy from round 6: alerted at round 10.
    assert_eq!(
        alerts,
        [
            ("device_idle".into(), "GPU 3".into()),
            ("device_outlier".into(), "GPU 3".into()),
            ("device_throttling".into(), "GPU 1".into()),
        ]
    );
    let throttle = of_type(&v, "alert")[2].clone();
    assert_eq!(throttle["pattern"], "throttled");
    assert_eq!(throttle["clock_mhz"], 1400.0);
    assert_eq!(throttle["max_clock_mhz"], 1733.0);
}

#[test]
fn a_dated_monitor_row_puts_a_device_alert_on_the_step_axis() {
    // One pipe carries a training log (step N ends at second N) and `nvidia-smi dmon -o DT`
    // (3 GPUs a second). GPU 1 computes nothing from second 8 with 40 000 MiB held: its 5th
    // idle sample is at 00:00:12, during step 12 (the first step that ended at or after it).
    let mut text = String::from(
        "#Date       Time        gpu   pwr    sm   mem  pclk    fb\n#YYYYMMDD   HH:MM:SS    Idx     W     %     %   MHz    MB\n",
    );
    for sec in 1..=20 {
        text.push_str(&format!(
            " [2025-01-01 00:00:{sec:02}] iteration {sec:8}/ 1000 | elapsed time per iteration (ms): 1000.0 | lm loss: 2.0E+00 |\n"
        ));
        for gpu in 0..3 {
            let sm = if gpu == 1 && sec >= 8 { 0 } else { 95 };
            text.push_str(&format!(
                " 20250101   00:00:{sec:02}      {gpu}   300    {sm}    40  1980 40000\n"
            ));
        }
    }
    let v = replay(text.as_bytes());
    let got: Vec<(&str, &serde_json::Value)> = of_type(&v, "alert")
        .iter()
        .map(|a| (a["rule"].as_str().unwrap(), &a["steps"]))
        .collect();
    assert_eq!(
        got,
        [
            ("device_idle", &serde_json::json!([12])),
            ("device_outlier", &serde_json::json!([12]))
        ]
    );
}
