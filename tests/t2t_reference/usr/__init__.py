# A T2T user dir (--t2t_usr_dir=THIS_FOLDER) for real Tensor2Tensor 1.15.7:
# importing it registers the problems that the T2T fixtures are made on.
from . import translate_enzh_fixture  # noqa: F401
from . import translate_enzh_shared_fixture  # noqa: F401
