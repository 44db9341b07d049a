pub mod clif_module;
