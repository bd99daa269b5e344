"""Data: time series and static samples (``dataset``), their files (``io``), and preprocessing
(``preprocess``: trimming, resampling, filtering, differentiation, splitting; a log longer than
memory piece by piece, ``prepare_pieces`` and ``prepare_to_file``), motor-side logs mapped to
the joints through a transmission (``motor_side``).
"""

from dynid.data._stream_prepare import prepare_pieces as prepare_pieces
from dynid.data._stream_prepare import prepare_to_file as prepare_to_file
from dynid.data.dataset import EFFORTS as EFFORTS
from dynid.data.dataset import MAX_MAGNITUDE as MAX_MAGNITUDE
from dynid.data.dataset import MAX_SAMPLES as MAX_SAMPLES
from dynid.data.dataset import Dataset as Dataset
from dynid.data.dataset import StaticData as StaticData
from dynid.data.dataset import concatenate as concatenate
from dynid.data.dataset import lower_triangle as lower_triangle
from dynid.data.dataset import sample_times as sample_times
from dynid.data.dataset import static_rows as static_rows
from dynid.data.dataset import with_accelerations as with_accelerations
from dynid.data.io import PANDA_LOG_FILES as PANDA_LOG_FILES
from dynid.data.io import read_dataset as read_dataset
from dynid.data.io import read_panda_log as read_panda_log
from dynid.data.io import read_static as read_static
from dynid.data.io import write_dataset as write_dataset
from dynid.data.io import write_log_pieces as write_log_pieces
from dynid.data.motor_side import to_joint_side as to_joint_side
from dynid.data.preprocess import DEFAULT_TRIM as DEFAULT_TRIM
from dynid.data.preprocess import FIELDS as FIELDS
from dynid.data.preprocess import MAX_GAP_STEPS as MAX_GAP_STEPS
from dynid.data.preprocess import GapWarning as GapWarning
from dynid.data.preprocess import data_cutoff as data_cutoff
from dynid.data.preprocess import dead_band as dead_band
from dynid.data.preprocess import differentiate as differentiate
from dynid.data.preprocess import inspect as inspect
from dynid.data.preprocess import lowpass as lowpass
from dynid.data.preprocess import moving_mean as moving_mean
from dynid.data.preprocess import noise_level as noise_level
from dynid.data.preprocess import prepare as prepare
from dynid.data.preprocess import resample as resample
from dynid.data.preprocess import savgol as savgol
from dynid.data.preprocess import segments as segments
from dynid.data.preprocess import split as split
from dynid.data.preprocess import trim as trim
from dynid.data.preprocess import uniform_step as uniform_step
from dynid.data.rosbag import JOINT_STATE as JOINT_STATE
from dynid.data.rosbag import read_rosbag as read_rosbag

__all__ = [
    "DEFAULT_TRIM",
    "EFFORTS",
    "FIELDS",
    "JOINT_STATE",
    "MAX_GAP_STEPS",
    "MAX_MAGNITUDE",
    "MAX_SAMPLES",
    "PANDA_LOG_FILES",
    "Dataset",
    "GapWarning",
    "StaticData",
    "concatenate",
    "data_cutoff",
    "dead_band",
    "differentiate",
    "inspect",
    "lower_triangle",
    "lowpass",
    "moving_mean",
    "noise_level",
    "prepare",
    "prepare_pieces",
    "prepare_to_file",
    "read_dataset",
    "read_panda_log",
    "read_rosbag",
    "read_static",
    "resample",
    "sample_times",
    "savgol",
    "segments",
    "split",
    "static_rows",
    "to_joint_side",
    "trim",
    "uniform_step",
    "with_accelerations",
    "write_dataset",
    "write_log_pieces",
]
