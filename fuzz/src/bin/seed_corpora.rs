//! Writes the seed corpora of the fuzz targets into `fuzz/corpus/`:
//! commands from `fuzz/seeds/*.txt` (one per paragraph, separated by a line
//! holding only `%%`) and from the corpus crate's cases
//! (`corpus/cases/*.toml`), the catalog for the catalog target, and random
//! byte strings for the structure-aware target.
//!
//! Run from `fuzz/`: `cargo run --bin seed-corpora`.

use std::fs;
use std::path::Path;

use bashgate_tests::gen::Rng;

#[derive(serde::Deserialize)]
struct Cases {
    #[serde(default)]
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    command: String,
}

fn files(dir: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn write_all(dir: &Path, prefix: &str, items: &[Vec<u8>]) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    for (i, item) in items.iter().enumerate() {
        fs::write(dir.join(format!("{prefix}-{i:04}")), item)?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut commands: Vec<Vec<u8>> = Vec::new();
    for f in files(&here.join("seeds"), "txt") {
        let text = fs::read_to_string(&f)?;
        for cmd in text.split("\n%%\n") {
            let cmd = cmd.trim_end_matches('\n');
            if !cmd.is_empty() && !cmd.starts_with('#') {
                commands.push(cmd.as_bytes().to_vec());
            }
        }
    }
    let own = commands.len();
    for f in files(&here.join("../corpus/cases"), "toml") {
        let cases: Cases = toml::from_str(&fs::read_to_string(&f)?)
            .map_err(|e| format!("{}: {e}", f.display()))?;
        commands.extend(cases.case.into_iter().map(|c| c.command.into_bytes()));
    }
    write_all(&here.join("corpus/analyze"), "seed", &commands)?;

    let catalog = fs::read(here.join("../analyzer/catalog.toml"))?;
    let mut catalogs = vec![
        [&[0u8][..], &catalog].concat(),
        [&[1u8][..], b"[programs.mytool]\nclass = \"local\"\n"].concat(),
        [
            &[3u8][..],
            b"[programs.w]\nclass = \"wrapper\"\nflags = [\"-x\"]\noptions_with_value = [\"-n\"]\n",
        ]
        .concat(),
        [
            &[1u8][..],
            b"[programs.g]\nclass = \"local\"\nalias = \"ls\"\n",
        ]
        .concat(),
    ];
    catalogs.push(
        [
            &[2u8][..],
            b"system_dirs = [\"/\"]\n[programs.sh]\nclass = \"shell\"\n",
        ]
        .concat(),
    );
    write_all(&here.join("corpus/catalog"), "seed", &catalogs)?;

    let mut rng = Rng::new(1);
    let random: Vec<Vec<u8>> = (0..64)
        .map(|i| (0..16 << (i % 6)).map(|_| rng.next_u64() as u8).collect())
        .collect();
    write_all(&here.join("corpus/generated"), "seed", &random)?;
    println!(
        "seeded: analyze {} ({own} from fuzz/seeds), catalog {}, generated {}",
        commands.len(),
        catalogs.len(),
        random.len()
    );
    Ok(())
}
