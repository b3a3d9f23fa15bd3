//! The settings and allowlist store (to come).
