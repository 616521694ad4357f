"""referee models: the statistical models (beta regressions, Measurement Layouts, Bradley-Terry, validity checks).

Importing it points PyTensor at the OpenBLAS the `scipy-openblas32` wheel ships (`referee.models.blas`), before
any model compiles."""

from referee.models.blas import link as _link_blas

_link_blas()
