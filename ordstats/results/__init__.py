"""What a fit returns: estimates, covariances, intervals, tests on one fit, predictions."""
