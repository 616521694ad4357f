"""referee's shipped data (catalogues, formulas, formats, samples), installed as the package `referee.shipped`."""
