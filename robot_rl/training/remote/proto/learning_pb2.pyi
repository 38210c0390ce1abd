from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Tensor(_message.Message):
    __slots__ = ("dtype", "shape", "data")
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    dtype: str
    shape: _containers.RepeatedScalarFieldContainer[int]
    data: bytes
    def __init__(self, dtype: _Optional[str] = ..., shape: _Optional[_Iterable[int]] = ..., data: _Optional[bytes] = ...) -> None: ...

class SpaceSpec(_message.Message):
    __slots__ = ("key", "dtype", "shape", "low", "high")
    KEY_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    key: str
    dtype: str
    shape: _containers.RepeatedScalarFieldContainer[int]
    low: Tensor
    high: Tensor
    def __init__(self, key: _Optional[str] = ..., dtype: _Optional[str] = ..., shape: _Optional[_Iterable[int]] = ..., low: _Optional[_Union[Tensor, _Mapping]] = ..., high: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...

class Spaces(_message.Message):
    __slots__ = ("observation", "action")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    observation: _containers.RepeatedCompositeFieldContainer[SpaceSpec]
    action: SpaceSpec
    def __init__(self, observation: _Optional[_Iterable[_Union[SpaceSpec, _Mapping]]] = ..., action: _Optional[_Union[SpaceSpec, _Mapping]] = ...) -> None: ...

class RegisterRequest(_message.Message):
    __slots__ = ("actor_id", "incarnation", "spaces", "secret")
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    SPACES_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    actor_id: str
    incarnation: str
    spaces: Spaces
    secret: bytes
    def __init__(self, actor_id: _Optional[str] = ..., incarnation: _Optional[str] = ..., spaces: _Optional[_Union[Spaces, _Mapping]] = ..., secret: _Optional[bytes] = ...) -> None: ...

class RegisterReply(_message.Message):
    __slots__ = ("learner_id", "weight_version", "acked_seq", "secret")
    LEARNER_ID_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACKED_SEQ_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    learner_id: str
    weight_version: int
    acked_seq: int
    secret: bytes
    def __init__(self, learner_id: _Optional[str] = ..., weight_version: _Optional[int] = ..., acked_seq: _Optional[int] = ..., secret: _Optional[bytes] = ...) -> None: ...

class FinalObs(_message.Message):
    __slots__ = ("index", "obs")
    class ObsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Tensor
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...
    INDEX_FIELD_NUMBER: _ClassVar[int]
    OBS_FIELD_NUMBER: _ClassVar[int]
    index: int
    obs: _containers.MessageMap[str, Tensor]
    def __init__(self, index: _Optional[int] = ..., obs: _Optional[_Mapping[str, Tensor]] = ...) -> None: ...

class ActorReport(_message.Message):
    __slots__ = ("env_steps", "episodes", "dropped_steps", "dropped_intervention_steps", "queued_steps", "weight_version")
    ENV_STEPS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    DROPPED_STEPS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_INTERVENTION_STEPS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_STEPS_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_VERSION_FIELD_NUMBER: _ClassVar[int]
    env_steps: int
    episodes: int
    dropped_steps: int
    dropped_intervention_steps: int
    queued_steps: int
    weight_version: int
    def __init__(self, env_steps: _Optional[int] = ..., episodes: _Optional[int] = ..., dropped_steps: _Optional[int] = ..., dropped_intervention_steps: _Optional[int] = ..., queued_steps: _Optional[int] = ..., weight_version: _Optional[int] = ...) -> None: ...

class TransitionBatch(_message.Message):
    __slots__ = ("actor_id", "incarnation", "seq", "episode_id", "step", "terminated", "truncated", "intervened", "success", "reward", "grasp_penalty", "action", "obs", "next_obs", "report", "secret")
    class ObsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Tensor
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    INTERVENED_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    GRASP_PENALTY_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    OBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_OBS_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    actor_id: str
    incarnation: str
    seq: int
    episode_id: _containers.RepeatedScalarFieldContainer[int]
    step: _containers.RepeatedScalarFieldContainer[int]
    terminated: _containers.RepeatedScalarFieldContainer[bool]
    truncated: _containers.RepeatedScalarFieldContainer[bool]
    intervened: _containers.RepeatedScalarFieldContainer[bool]
    success: _containers.RepeatedScalarFieldContainer[bool]
    reward: _containers.RepeatedScalarFieldContainer[float]
    grasp_penalty: _containers.RepeatedScalarFieldContainer[float]
    action: Tensor
    obs: _containers.MessageMap[str, Tensor]
    next_obs: _containers.RepeatedCompositeFieldContainer[FinalObs]
    report: ActorReport
    secret: bytes
    def __init__(self, actor_id: _Optional[str] = ..., incarnation: _Optional[str] = ..., seq: _Optional[int] = ..., episode_id: _Optional[_Iterable[int]] = ..., step: _Optional[_Iterable[int]] = ..., terminated: _Optional[_Iterable[bool]] = ..., truncated: _Optional[_Iterable[bool]] = ..., intervened: _Optional[_Iterable[bool]] = ..., success: _Optional[_Iterable[bool]] = ..., reward: _Optional[_Iterable[float]] = ..., grasp_penalty: _Optional[_Iterable[float]] = ..., action: _Optional[_Union[Tensor, _Mapping]] = ..., obs: _Optional[_Mapping[str, Tensor]] = ..., next_obs: _Optional[_Iterable[_Union[FinalObs, _Mapping]]] = ..., report: _Optional[_Union[ActorReport, _Mapping]] = ..., secret: _Optional[bytes] = ...) -> None: ...

class BatchAck(_message.Message):
    __slots__ = ("seq", "accepted", "duplicate")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    accepted: int
    duplicate: bool
    def __init__(self, seq: _Optional[int] = ..., accepted: _Optional[int] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class WeightsRequest(_message.Message):
    __slots__ = ("actor_id", "have_version", "secret")
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    HAVE_VERSION_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    actor_id: str
    have_version: int
    secret: bytes
    def __init__(self, actor_id: _Optional[str] = ..., have_version: _Optional[int] = ..., secret: _Optional[bytes] = ...) -> None: ...

class Weights(_message.Message):
    __slots__ = ("version", "tensors", "learner_updates", "published_unix")
    class TensorsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: Tensor
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[Tensor, _Mapping]] = ...) -> None: ...
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TENSORS_FIELD_NUMBER: _ClassVar[int]
    LEARNER_UPDATES_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_UNIX_FIELD_NUMBER: _ClassVar[int]
    version: int
    tensors: _containers.MessageMap[str, Tensor]
    learner_updates: int
    published_unix: float
    def __init__(self, version: _Optional[int] = ..., tensors: _Optional[_Mapping[str, Tensor]] = ..., learner_updates: _Optional[int] = ..., published_unix: _Optional[float] = ...) -> None: ...
