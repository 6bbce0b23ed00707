//! SAFETY-CONTRACT.md stays true: every reason code is listed in §5b with
//! exactly the remedy the code prints.

use std::path::PathBuf;

#[test]
fn every_reason_code_is_in_the_contract_with_its_remedy() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("SAFETY-CONTRACT.md");
    let text = std::fs::read_to_string(&path).unwrap();
    for code in diff2test::reason::Code::ALL {
        let row = format!(
            "| `{}` | {} |",
            code.as_str(),
            code.remedy().replace('|', "\\|")
        );
        assert!(
            text.contains(&row),
            "SAFETY-CONTRACT.md §5b lacks the row for {}:\n{row}",
            code.as_str()
        );
    }
}
