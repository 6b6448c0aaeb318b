# A T2T user dir (--t2t_usr_dir=THIS_FOLDER) for real Tensor2Tensor 1.15.7:
# importing it registers the problem that the equivalence fixtures are made on.
from . import translate_enzh_fixture  # noqa: F401
