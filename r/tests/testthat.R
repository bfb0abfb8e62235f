# R CMD check's entry point; `make r-test` runs the same tests with testthat::test_dir.
library(testthat)
library(ubapp)

test_check("ubapp")
