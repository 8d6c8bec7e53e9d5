//! Scores of predictions against truth: MSE, R², accuracy (argmax), mean AUC over labels,
//! Hamming loss, and the RBF loss of structured outputs.
