"""`referee paper`: each seed paper's numbered figures and tables, made by the paper's own protocol.

One module per paper (`concordia`, `compact`, `aoa`) lists every numbered item of that paper and makes the
ones a store allows; `items` holds what they share: the manifest entry (`Item`) and its writer."""
