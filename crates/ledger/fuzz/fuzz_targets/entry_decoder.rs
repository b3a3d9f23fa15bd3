//! The entry decoder and the fold on arbitrary `data`: never panics; whatever decodes as a
//! single-part round encodes again and decodes to the same round; a lone entry never grants
//! more than it lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pcd_ledger::{decode_single, encode_round, fold, CUSTOM_TYPE};
use serde_json::{json, Value};

fuzz_target!(|bytes: &[u8]| {
    let Ok(data) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    let entry = json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data.clone(),
                       "id": "0000fuzz", "parentId": null});
    let (state, findings) = fold([&entry]);
    if let Ok(round) = decode_single(&data) {
        let again = encode_round(&round).expect("a decoded round encodes");
        assert_eq!(again.len(), 1);
        assert_eq!(decode_single(&again[0]).expect("and decodes again"), round);
        assert!(findings.is_empty());
        for tool in state.available_tools() {
            assert!(round
                .tools
                .iter()
                .chain(&round.allowlisted_tools)
                .any(|t| t == tool));
        }
    } else {
        assert_eq!(state.available_tools().count(), 0);
        assert_eq!(state.available_groups().count(), 0);
    }
});
