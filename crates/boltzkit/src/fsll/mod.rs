//! The full-span log-linear model (Takabatake & Akaho).
