//! Communication findings in words.

use super::Words;
use crate::analysis::advisor::rules::communication::Claim;
use crate::analysis::advisor::rules::communication::TypeInGroup;
use crate::format::human;
use crate::model::RankId;
use crate::time::Ns;

/// The words of a communication finding.
pub(super) fn words(c: &Claim) -> Words {
    match c {
        Claim::PoorOverlap {
            ratio,
            exposed_ns,
            exposed_share,
        } => poor_overlap(ratio, exposed_ns, exposed_share),
        Claim::WaitDominated {
            of,
            wait_ratio,
            late,
            late_entry,
            unloaded,
        } => match (late, unloaded) {
            (None, Some(n)) => wait_dominated_unloaded(of, wait_ratio, n),
            _ => wait_dominated_late(of, wait_ratio, late, late_entry),
        },
        Claim::StalledTransfer {
            of,
            name,
            transit_ns,
            expected_ns,
            reference_gbps,
            instances,
            missing,
        } => stalled(
            of,
            name.as_deref(),
            (*transit_ns, *expected_ns),
            *reference_gbps,
            *instances,
            missing,
        ),
        Claim::LowBandwidth {
            of,
            busbw_gbps,
            of_peak,
            link,
        } => low_bandwidth(of, busbw_gbps, of_peak, link),
        Claim::SmallMessages {
            of,
            small,
            calls,
            threshold,
        } => small_messages(of, small, calls, threshold),
        Claim::Misaligned { of, calls } => misaligned(of, calls),
        Claim::UnalignedTransfers {
            ops,
            ranks,
            unaligned,
            size,
            gbps,
            tail_ns,
        } => unaligned_transfers((*ops, *ranks, *unaligned, *size), *gbps, *tail_ns),
        Claim::SlowTransportLink {
            group,
            src,
            dst,
            transport,
            gbps,
            median_gbps,
            slow,
        } => slow_transport_link(group, (*src, *dst), transport, (*gbps, *median_gbps), *slow),
        Claim::SlowLink {
            rank,
            peer,
            group,
            transit_ns,
            median_ns,
        } => match peer {
            Some(peer) => slow_link_pair(rank, peer, group, transit_ns, median_ns),
            None => slow_link_rank(rank, group, transit_ns, median_ns),
        },
    }
}

/// A stalled transfer: the worst instance, what it needed, and who may be missing.
fn stalled(
    of: &TypeInGroup,
    name: Option<&str>,
    (transit_ns, expected_ns): (Ns, Ns),
    reference_gbps: f64,
    instances: u64,
    missing: &[RankId],
) -> Words {
    let what = name.map_or(of.op.as_str().to_string(), |n| {
        format!("{n} ({})", of.op.as_str())
    });
    let more = if instances > 1 {
        format!(" ({instances} such calls)")
    } else {
        String::new()
    };
    let unseen = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "; ranks {} of the group are not loaded",
            crate::format::ranges(missing)
        )
    };
    Words {
        title: format!(
            "{what} in group {} took {} after every loaded rank arrived, {:.0}x the {} its size needs at the type's best {:.1} GB/s{more}{unseen}",
            of.group,
            human(transit_ns),
            transit_ns as f64 / expected_ns.max(1) as f64,
            human(expected_ns),
            reference_gbps,
        ),
        cause: "the transfer waited for something the profile does not show: a rank that is not loaded arriving late (a group can be larger than the ranks profiled), or a stalled link",
        suggestions: &[
            "profile every rank of the group, or on Ascend at Level1 or above: HCCL's Notify_Wait tasks then name the peer each rank waited for",
            "if every rank is loaded, check the links: NCCL_DEBUG=INFO / hccn_tool -i N -link -g for errors, retransmissions and ports that went down",
            "tuning bandwidth (buckets, algorithms) will not help: the same collective ran at full speed in other calls",
        ],
    }
}

/// A slow link of HCCL's matrix: its ranks, type, bandwidth against the median.
fn slow_transport_link(
    group: &str,
    (src, dst): (u32, u32),
    transport: &str,
    (gbps, median_gbps): (f64, f64),
    slow: u64,
) -> Words {
    Words {
        title: format!(
            "the {transport} link {src}->{dst} of group {group} moves {gbps:.1} GB/s, under the {median_gbps:.1} GB/s median of the group's {transport} links ({slow} slow link(s); ranks within the group)"
        ),
        cause: "one link between two devices is slower than its peers of the same type: a degraded HCCS/RoCE port, a link trained at lower speed, or contention on it",
        suggestions: &[
            "check the link's ports and counters (hccn_tool -i N -link -g, -stat -g; NCCL: nvidia-smi nvlink -s / ibstat) for errors and speed",
            "run an HCCL/NCCL bandwidth test between the two devices",
        ],
    }
}

/// HCCL transfers not a multiple of 512 B, with what they measurably cost.
fn unaligned_transfers(
    (ops, ranks, unaligned, size): (u64, u64, u64, u64),
    (gbps, aligned_gbps): (Option<f64>, Option<f64>),
    tail_ns: Ns,
) -> Words {
    let rate = |g: Option<f64>| g.map_or("-".into(), crate::format::gbps);
    let of = format!("{unaligned} HCCL transfer(s) of {ops} op(s) on {ranks} rank(s)");
    let rates = format!("unaligned {}, aligned {}", rate(gbps), rate(aligned_gbps));
    let title = if tail_ns == 0 {
        format!(
            "{of} move a size that is not a multiple of 512 B ({size} B), yet none outlasted the aligned transfers beside it ({rates}): no measured cost"
        )
    } else {
        format!(
            "{of} move a size that is not a multiple of 512 B ({size} B) and ran on {} after the aligned transfers beside them ({rates})",
            human(tail_ns)
        )
    };
    Words {
        title,
        cause: "HCCL splits an op's buffer into per-link chunks; a buffer that is not a multiple of 512 B leaves unaligned chunks, which can take slower copy paths",
        suggestions: if tail_ns == 0 {
            &[
                "nothing to gain measured here; if the op grows, pad fused buffers / bucket sizes to multiples of 512 B (128 fp32 elements) and profile again",
            ]
        } else {
            &["pad fused buffers / bucket sizes to multiples of 512 B (128 fp32 elements)"]
        },
    }
}

/// The words of [`Claim::PoorOverlap`].
fn poor_overlap(ratio: &f64, exposed_ns: &Ns, exposed_share: &f64) -> Words {
    Words {
        title: format!(
            "only {:.0}% of communication is hidden behind compute; {} exposed ({:.0}% of the step)",
            ratio * 100.0,
            human(*exposed_ns),
            exposed_share * 100.0
        ),
        cause: "collectives run while no compute is available to overlap them (bucket order, late launches, blocking waits)",
        suggestions: &[
            "DDP: smaller first bucket / bucket_cap_mb so all-reduce starts during backward; FSDP: enable forward/backward prefetch",
            "avoid host syncs between backward and the optimizer (they serialize communication)",
            "use a separate communication stream and do not wait on it before it is needed",
        ],
    }
}

/// The words of [`Claim::WaitDominated`] where the late rank is not among those loaded.
fn wait_dominated_unloaded(of: &TypeInGroup, wait_ratio: &f64, n: &u32) -> Words {
    Words {
        title: format!(
            "{} in group {} is {:.0}% waiting by HCCL's own split, for one of the {n} rank(s) not loaded: fix the late rank, not the network",
            of.op.as_str(),
            of.group,
            wait_ratio * 100.0,
        ),
        cause: "HCCL's ops spent that share of their time not moving data while every loaded rank waited alike: the rank they waited for is not among those loaded",
        suggestions: &[
            "load the group's other ranks (or their kernel tables): the one that arrives last is the one to fix",
            "faster links or HCCL tuning will not help while ranks arrive late",
        ],
    }
}

/// The words of [`Claim::WaitDominated`] with the late rank loaded (or unknown).
fn wait_dominated_late(
    of: &TypeInGroup,
    wait_ratio: &f64,
    late: &Option<(RankId, u64, u64)>,
    late_entry: &bool,
) -> Words {
    Words {
        title: format!(
            "{} in group {} is {:.0}% waiting{}: fix the late rank, not the network",
            of.op.as_str(),
            of.group,
            wait_ratio * 100.0,
            late.map_or(String::new(), |(r, last, of)| format!(
                ", mostly for rank {r} (last to arrive at {last} of {of}{})",
                if *late_entry {
                    "; it entered the step late: the delay began before the profiled window"
                } else {
                    ""
                }
            ))
        ),
        cause: "collective time is spent waiting for the last rank to arrive (wait / (wait + transit) > 0.2)",
        suggestions: if *late_entry {
            &[
                "profile several consecutive steps (schedule(active=N)): the late rank's delay began before the profiled step",
                "then fix what precedes it on that rank (its previous step, data loading, a stall between steps)",
                "faster links or NCCL tuning will not help while ranks arrive late",
            ]
        } else {
            &[
                "find the rank that arrives last (stragglers, slow steps) and fix its own work first",
                "faster links or NCCL tuning will not help while ranks arrive late",
            ]
        },
    }
}

/// The words of [`Claim::LowBandwidth`].
fn low_bandwidth(
    of: &TypeInGroup,
    busbw_gbps: &f64,
    of_peak: &f64,
    link: &Option<String>,
) -> Words {
    Words {
        title: format!(
            "{} in group {} reaches {:.0} GB/s bus bandwidth, {:.0}% of the {} peak",
            of.op.as_str(),
            of.group,
            busbw_gbps,
            of_peak * 100.0,
            link.as_deref().unwrap_or("link")
        ),
        cause: "transfers are slow though ranks arrive together: topology, NCCL algorithm/protocol, or contention",
        suggestions: &[
            "check the topology NCCL sees (NCCL_DEBUG=INFO; nvidia-smi topo -m); GPUDirect RDMA and NIC affinity",
            "try NCCL_ALGO / NCCL_PROTO, more channels (NCCL_MIN_NCHANNELS), SHARP/NVLS where available",
            "avoid overlapping heavy memory traffic with communication on the same links",
        ],
    }
}

/// The words of [`Claim::SmallMessages`].
fn small_messages(of: &TypeInGroup, small: &u64, calls: &u64, threshold: &u64) -> Words {
    Words {
        title: format!(
            "{small} of {calls} {} calls in group {} are under {} MiB (small messages)",
            of.op.as_str(),
            of.group,
            threshold >> 20
        ),
        cause: "small collectives are latency-bound: per-call overhead dominates their transfer",
        suggestions: &[
            "fuse gradients into larger buckets (DDP bucket_cap_mb, FSDP larger wrap units)",
            "use gradient accumulation or a larger micro-batch; ZeRO-3 → ZeRO-2/1 where memory allows",
            "fused optimizers instead of per-parameter collectives",
        ],
    }
}

/// The words of [`Claim::Misaligned`].
fn misaligned(of: &TypeInGroup, calls: &u64) -> Words {
    Words {
        title: format!(
            "{calls} {} call(s) in group {} move a size that is not a multiple of 512 B",
            of.op.as_str(),
            of.group
        ),
        cause: "unaligned buffers take slower copy paths in the collective implementation",
        suggestions: &["pad fused buffers / bucket sizes to multiples of 512 B (or 128 elements)"],
    }
}

/// The words of [`Claim::SlowLink`] between two ranks.
fn slow_link_pair(
    rank: &RankId,
    peer: &RankId,
    group: &str,
    transit_ns: &Ns,
    median_ns: &Ns,
) -> Words {
    Words {
        title: format!(
            "the link rank {rank} ↔ rank {peer} (group {group}) takes {} a transfer vs {} at the other pairs' median speed",
            human(*transit_ns),
            human(*median_ns)
        ),
        cause: "one point-to-point link (NVLink fallen back to PCIe or sockets, a NIC, cable or switch port) is slower than the job's other pairs",
        suggestions: &[
            "check the pair's topology (nvidia-smi topo -m) and NCCL's chosen transport (NCCL_DEBUG=INFO: P2P/IPC vs SHM or NET)",
            "run nccl-tests' sendrecv between the two ranks, and check the NIC and port counters",
        ],
    }
}

/// The words of [`Claim::SlowLink`] of one rank against its group.
fn slow_link_rank(rank: &RankId, group: &str, transit_ns: &Ns, median_ns: &Ns) -> Words {
    Words {
        title: format!(
            "rank {rank}'s transfers in group {group} take {} vs the group median {}",
            human(*transit_ns),
            human(*median_ns)
        ),
        cause: "one rank's link (NIC, cable, switch port, PCIe) is slower than its peers'",
        suggestions: &[
            "check the rank's NIC and port counters (errors, retransmissions), link speed and PCIe width",
            "run nccl-tests between that node and its peers",
        ],
    }
}
