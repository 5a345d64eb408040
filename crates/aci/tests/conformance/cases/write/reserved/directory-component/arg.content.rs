pub mod x;
