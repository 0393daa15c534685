//! The Gustavian 10x8 board with holes, for Secutor Chess (in progress).
