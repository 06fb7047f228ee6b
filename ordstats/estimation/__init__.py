"""Models and how they are fitted: options, the model, the evaluators."""
