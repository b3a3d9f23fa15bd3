//! The Pi version whose loader the reader mirrors.

use std::fmt;

/// A Pi release, `MAJOR.MINOR.PATCH`. Only the differences between releases' `mcp.json` loaders
/// matter here: 1.4 strips a UTF-8 byte-order mark that 1.0 to 1.3 reject, and 1.6 accepts
/// `oauth.clientRegistration: "auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PiVersion {
    major: u32,
    minor: u32,
    patch: u32,
}

/// A version string that is not `MAJOR.MINOR` or `MAJOR.MINOR.PATCH` (digits only, optionally
/// with a `v` prefix). The text is not echoed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a Pi version is MAJOR.MINOR or MAJOR.MINOR.PATCH, such as 1.6.0 (got {chars} characters that are not one)")]
pub struct PiVersionError {
    chars: usize,
}

impl PiVersion {
    /// The newest release whose loader this crate knows; later releases behave like it.
    pub const NEWEST: PiVersion = PiVersion::new(1, 6, 0);

    /// A version from its parts.
    pub const fn new(major: u32, minor: u32, patch: u32) -> PiVersion {
        PiVersion {
            major,
            minor,
            patch,
        }
    }

    /// Parses `1.6`, `1.6.0` or `v1.6.0`. A pre-release or build suffix (`1.6.0-rc.1`) is
    /// ignored: it has the loader of its release line.
    pub fn parse(text: &str) -> Result<PiVersion, PiVersionError> {
        let bad = || PiVersionError {
            chars: text.chars().count(),
        };
        let core = text.strip_prefix('v').unwrap_or(text);
        let core = core.split(['-', '+']).next().unwrap_or("");
        let parts: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let mut numbers = [0u32; 3];
        for (slot, part) in numbers.iter_mut().zip(&parts) {
            if part.is_empty() || part.len() > 9 || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            *slot = part.parse().map_err(|_| bad())?;
        }
        Ok(PiVersion::new(numbers[0], numbers[1], numbers[2]))
    }

    /// Whether the loader strips a leading byte-order mark before `JSON.parse` (1.4 and later).
    pub fn strips_bom(self) -> bool {
        self >= PiVersion::new(1, 4, 0)
    }

    /// Whether `oauth.clientRegistration: "auto"` is valid (1.6 and later).
    pub fn accepts_auto_client_registration(self) -> bool {
        self >= PiVersion::new(1, 6, 0)
    }
}

impl Default for PiVersion {
    fn default() -> Self {
        PiVersion::NEWEST
    }
}

impl fmt::Display for PiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders() {
        assert_eq!(PiVersion::parse("1.3").unwrap(), PiVersion::new(1, 3, 0));
        assert_eq!(PiVersion::parse("v1.5.2").unwrap(), PiVersion::new(1, 5, 2));
        assert_eq!(
            PiVersion::parse("1.6.0-rc.1").unwrap(),
            PiVersion::new(1, 6, 0)
        );
        assert_eq!(PiVersion::parse("1.6.0").unwrap().to_string(), "1.6.0");
        for bad in ["", "1", "1.x", "1.2.3.4", "one.two", "1..2", "sk-SECRET"] {
            let e = PiVersion::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("SECRET"), "{e}");
        }
        assert_eq!(PiVersion::default(), PiVersion::NEWEST);
    }

    #[test]
    fn version_dependent_behaviour() {
        let v = |s| PiVersion::parse(s).unwrap();
        assert!(!v("1.0.3").strips_bom());
        assert!(!v("1.3.0").strips_bom());
        assert!(v("1.4.0").strips_bom());
        assert!(v("2.0").strips_bom());
        assert!(!v("1.5.2").accepts_auto_client_registration());
        assert!(v("1.6.0").accepts_auto_client_registration());
    }
}
