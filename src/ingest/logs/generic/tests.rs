use super::*;

fn steps(lines: &[String]) -> Vec<Step> {
    let mut t = Templates::default();
    lines
        .iter()
        .filter_map(
            |l| match learn(&crate::ingest::logs::line::normalise(l.as_bytes())?, &mut t) {
                Some(Said::Step(s)) => Some(s),
                _ => None,
            },
        )
        .collect()
}

#[test]
fn a_plain_print_loop_is_learned_with_its_rate() {
    let lines: Vec<String> = (1..=8)
        .map(|i| {
            format!(
                "Batch {} Loss: 2.{i}45, Speed: 123{i}.5 samples/sec",
                i * 100
            )
        })
        .collect();
    let s = steps(&lines);
    // The first four teach the template; the other four are its records.
    assert_eq!(s.len(), 4);
    assert_eq!(s[0].step, Some(500));
    assert_eq!(s[0].time_ns, None);
    assert_eq!(s[0].metrics, [("samples_per_s", 1235.5)]);
}

#[test]
fn maxtext_seconds_is_a_per_step_time_and_a_cumulative_timer_is_cumulative() {
    let lines: Vec<String> = [1.5, 1.4, 1.6, 1.5, 3.2, 1.5]
        .iter()
        .enumerate()
        .map(|(i, s)| format!("completed step: {i}, seconds: {s}, TFLOP/s/device: 123.4, Tokens/s/device: 5678, loss: 8.1"))
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].step, s[0].time_ns), (Some(4), Some(3_200_000_000)));
    assert_eq!(s[0].provenance, Provenance::PerStep);
    let lines: Vec<String> = (1..=6)
        .map(|i| format!("it {i} elapsed_ms {} loss 3.{i}", i * 250))
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].cumulative_ns, Some(1_250_000_000));
    assert_eq!(s[0].time_ns, None);
}

#[test]
fn counters_and_prose_are_not_step_lines() {
    let mut lines: Vec<String> = (1..=8)
        .map(|i| format!("Downloading shard {i}/64"))
        .collect();
    lines.extend((1..=8).map(|i| format!("epoch {} loss {}", i % 3, i)));
    assert!(steps(&lines).is_empty());
}
