pub mod cgdata;
pub mod clif_module;
pub mod fmerge;
pub mod gvn;
pub mod merge;
pub mod outline;
