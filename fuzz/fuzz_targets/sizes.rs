//! Bytes → the two size parsers a user types into: `OVK_MEMORY_LIMIT` (`ovk_core::kernels::
//! parse_size`: `17e9`, `1GB`, `512MiB`) and a rank sweep (`--rank-sweep 1..40:5`, `2,5,10`,
//! `ovk_core::methods::lowrank_okl::parse_ranks`). A size is a whole number of bytes or refused; a
//! sweep is at most 1000 distinct ranks, each between 1 and 10⁶, or an exit-2 refusal that names
//! `rank_sweep` — never an allocation sized by the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovk_core::kernels::parse_size;
use ovk_core::methods::lowrank_okl::parse_ranks;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(b) = parse_size(text) {
        assert!((b as f64) < 1.8e19);
    }
    match parse_ranks(text) {
        Ok(ranks) => {
            assert!(!ranks.is_empty() && ranks.len() <= 1000, "{} ranks", ranks.len());
            assert!(ranks.iter().all(|&r| (1..=1_000_000).contains(&r)));
            let mut seen = ranks.clone();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), ranks.len(), "a rank twice: {ranks:?}");
        }
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "{e:?}");
            assert!(e.to_string().starts_with("rank_sweep"), "{e}");
        }
    }
});
