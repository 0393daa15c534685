//! The 8x8 board for chess and Latte Chess (in progress).
