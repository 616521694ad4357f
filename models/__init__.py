"""referee models: the statistical models (beta regressions, Measurement Layouts, Bradley-Terry, validity checks)."""
