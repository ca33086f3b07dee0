"""The side of `compat smoke` that runs inside the judged interpreter: `python child.py STAGE [ARGS]`.

Run by path, never imported by compat: the judged environment need not have compat installed, so
this file uses the standard library, its sibling child_steps.py and the packages it checks, nothing else. Each step prints one
line `@@compat-smoke {json}` on stdout (name, status, seconds, detail); a failing step prints its
traceback on stderr, which compat hands to explain. Under a launcher only the first rank reports.
Everything written goes under the working directory, a temp dir compat removes afterwards.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
import time
from collections.abc import Callable
from typing import Any

# Run by path, child_steps is a module of the script's folder; imported as compat's (the tests), a sibling.
try:
    from child_steps import FAILED, Skip, _rank, _version, step  # type: ignore[import-not-found,no-redef,unused-ignore]
except ImportError:
    from compat.sources.smoke.child_steps import FAILED, Skip, _rank, _version, step


# ----------------------------------------------------------------------------- import


def stage_import(args: list[str]) -> None:
    """ARGS: DIST=MODULE (a package) or ext:DIST=MODULE (a compiled extension of an installed package)."""
    for arg in args:
        kind, _, spec = arg.rpartition(":")
        dist, _, module = spec.partition("=")
        label = f"extension {module}" if kind == "ext" else f"import {module}"
        with step(label) as detail:
            importlib.import_module(module)
            if kind != "ext":
                detail.append(f"{dist} {_version(dist)}")
        if module == "bitsandbytes" and "import bitsandbytes" not in FAILED:
            with step("extension bitsandbytes native library"):
                import bitsandbytes

                lib = getattr(getattr(bitsandbytes, "cextension", None), "lib", None)
                if lib is None:
                    raise Skip("bitsandbytes exposes no native library handle in this release")


# ----------------------------------------------------------------------------- device


def stage_device(args: list[str]) -> None:
    import torch

    if not torch.cuda.is_available():
        with step("cuda"):
            raise Skip("torch.cuda.is_available() is False: no CUDA device visible to torch")
        return
    count = torch.cuda.device_count()
    arch_list = torch.cuda.get_arch_list()
    for i in range(count):
        dev = torch.device("cuda", i)
        major, minor = torch.cuda.get_device_capability(i)
        with step(f"init cuda:{i}") as detail:
            torch.cuda.init()
            torch.zeros(1, device=dev)
            detail.append(f"{torch.cuda.get_device_name(i)} sm_{major}{minor}")
        with step(f"compiled architectures cuda:{i}") as detail:
            own = f"sm_{major}{minor}"
            ptx = [a for a in arch_list if a.startswith("compute_") and int(a[8:].rstrip("a")) <= major * 10 + minor]
            if own not in arch_list and not ptx:
                raise RuntimeError(f"torch {torch.__version__} has no kernel image for {own}: built for {' '.join(arch_list)}")
            detail.append(own if own in arch_list else f"{own} by PTX {ptx[-1]}")
        dtypes = [("fp32", torch.float32), ("fp16", torch.float16)]
        if torch.cuda.is_bf16_supported():
            dtypes.append(("bf16", torch.bfloat16))
        for label, dtype in dtypes:
            with step(f"matmul {label} cuda:{i}"):
                a = torch.randn(64, 64, device=dev, dtype=dtype)
                b = (a @ a).float()
                torch.cuda.synchronize(dev)
                if not torch.isfinite(b).all():
                    raise RuntimeError(f"matmul in {label} on cuda:{i} gave non-finite values")
        with step(f"matmul fp8 cuda:{i}"):
            if (major, minor) < (8, 9) or not hasattr(torch, "float8_e4m3fn"):
                raise Skip(f"sm_{major}{minor} has no fp8 tensor cores (needs sm_89 or newer)")
            a = torch.randn(32, 32, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(32, 32, device=dev).to(torch.float8_e4m3fn).t()
            one = torch.ones((), device=dev)
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            torch.cuda.synchronize(dev)
    with step("peer access") as detail:
        if count < 2:
            raise Skip("one GPU visible: no peer to reach")
        missing = [f"{i}->{j}" for i in range(count) for j in range(count)
                   if i != j and not torch.cuda.can_device_access_peer(i, j)]
        detail.append("every pair" if not missing else f"no peer access {' '.join(missing)} (traffic goes through the host)")


# ----------------------------------------------------------------------------- collective


def stage_collective(args: list[str]) -> None:
    """Run under torchrun: one all-reduce on the job's backend (NCCL on GPUs, else gloo) over every rank."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", "0"))
    use_nccl = torch.cuda.is_available() and torch.cuda.device_count() >= world and dist.is_nccl_available()
    backend = "nccl" if use_nccl else "gloo"
    with step(f"all-reduce {backend} x{world}") as detail:
        device = torch.device("cuda", local) if use_nccl else torch.device("cpu")
        if use_nccl:
            torch.cuda.set_device(device)
        dist.init_process_group(backend, timeout=timedelta(seconds=60))
        tensor = torch.full((1 << 20,), float(rank + 1), device=device)
        dist.all_reduce(tensor)
        expected = world * (world + 1) / 2
        if float(tensor[0]) != expected:
            raise RuntimeError(f"all-reduce gave {float(tensor[0])}, expected {expected}")
        dist.barrier()
        dist.destroy_process_group()
        detail.append(f"{backend}, {world} processes, 4 MiB")


# ----------------------------------------------------------------------------- kernels


def stage_kernels(args: list[str]) -> None:
    import torch
    import torch.nn.functional as F

    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    with step("sdpa") as detail:
        q = torch.randn(1, 2, 16, 8, device=dev, requires_grad=True)
        F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
        detail.append(f"on {dev.type}")
    if cuda:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
            backend = getattr(SDPBackend, name, None)
            with step(f"sdpa {name.lower()}"):
                if backend is None:
                    raise Skip(f"torch {torch.__version__} has no SDPBackend.{name}")
                q = torch.randn(1, 2, 64, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
                with sdpa_kernel(backend):
                    F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
                torch.cuda.synchronize()
    with step("flash-attn forward/backward") as detail:
        if not cuda:
            raise Skip("no CUDA device: flash-attn runs on GPUs only")
        if _version("flash-attn") is None:
            raise Skip("flash-attn is not installed")
        from flash_attn import flash_attn_func

        q = torch.randn(1, 64, 2, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
        flash_attn_func(q, q, q, causal=True).sum().backward()
        torch.cuda.synchronize()
        detail.append(f"flash-attn {_version('flash-attn')}")
    with step("triton kernel") as detail:
        if not cuda:
            raise Skip("no CUDA device: triton compiles for GPUs only")
        if _version("triton") is None:
            raise Skip("triton is not installed")
        compiled = torch.compile(lambda x: torch.nn.functional.gelu(x) * 2)
        compiled(torch.randn(128, device=dev))
        torch.cuda.synchronize()
        detail.append(f"triton {_version('triton')} via torch.compile")
    with step("bitsandbytes 4-bit") as detail:
        if not cuda:
            raise Skip("no CUDA device: bitsandbytes 4-bit runs on GPUs here")
        if _version("bitsandbytes") is None:
            raise Skip("bitsandbytes is not installed")
        import bitsandbytes as bnb

        layer = bnb.nn.Linear4bit(64, 64, compute_dtype=torch.bfloat16, quant_type="nf4").to(dev)
        layer(torch.randn(2, 64, device=dev, dtype=torch.bfloat16)).sum()
        torch.cuda.synchronize()
        detail.append(f"bitsandbytes {_version('bitsandbytes')}")


# ----------------------------------------------------------------------------- the tiny model


def tiny_model(where: str, *, hidden: int = 16) -> str:
    """A random two-layer Llama and a word-level tokenizer trained here, saved under `where`; nothing downloaded.
    Two heads of `hidden // 2`: vLLM's attention kernels take head sizes from 32 up, so serve builds hidden 128."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    text = ("the quick brown fox jumps over the lazy dog a cat sat on mat hello world "
            "user assistant system yes no good bad answer question one two three")
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator([text] * 4, trainers.WordLevelTrainer(
        special_tokens=["<unk>", "<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"]))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                  eos_token="</s>")
    tok.chat_template = (
        "{% for m in messages %}{{ '<|' + m['role'] + '|> ' + m['content'] + ' </s> ' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|assistant|> ' }}{% endif %}"
    )
    config = LlamaConfig(vocab_size=len(tok), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                         pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(config)
    path = os.path.join(where, "tiny-llama")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


# ----------------------------------------------------------------------------- serve


def stage_serve(args: list[str]) -> None:
    """ARGS: one mode (compat.smoke.plan.SERVE_MODES). engine: vllm.LLM, two generations, sleep and wake; server: `trl vllm-serve` and
    TRL's VLLMClient; colocate: two GRPO steps with vllm_mode="colocate"."""
    mode = args[0] if args else "engine"
    run = {"engine": _serve_engine, "server": _serve_server, "colocate": _serve_colocate}[mode]
    with step(f"{mode}: tiny model") as detail:
        path = tiny_model(os.getcwd(), hidden=128)
        detail.append("2 layers, hidden 128, 2 heads of 64")
    if FAILED:
        return
    run(path)


def _serve_engine(path: str) -> None:
    with step("vllm engine") as detail:
        from vllm import LLM, SamplingParams

        kwargs: dict[str, Any] = {"model": path, "max_model_len": 128, "gpu_memory_utilization": 0.2,
                                  "enforce_eager": True}
        if "enable_sleep_mode" in inspect.signature(LLM.__init__).parameters or hasattr(LLM, "sleep"):
            kwargs["enable_sleep_mode"] = True
        llm = LLM(**kwargs)
        detail.append(f"vllm {_version('vllm')}")
    if "vllm engine" in FAILED:
        return
    params = SamplingParams(max_tokens=8, temperature=0.0)
    for n in (1, 2):
        with step(f"generation {n}"):
            out = llm.generate(["hello world"], params)
            if not out or not out[0].outputs:
                raise RuntimeError("vLLM returned no completion")
    with step("sleep and wake"):
        if not hasattr(llm, "sleep"):
            raise Skip(f"vllm {_version('vllm')} has no sleep mode")
        llm.sleep(level=1)
        llm.wake_up()
        llm.generate(["hello world"], params)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _vllm_client() -> Any:
    """TRL's client of `trl vllm-serve`: trl.generation.vllm_client since 1.0, trl.extras.vllm_client before."""
    try:
        from trl.generation.vllm_client import VLLMClient
    except ImportError:
        try:
            from trl.extras.vllm_client import VLLMClient  # type: ignore[no-redef,import-not-found,unused-ignore]
        except ImportError:
            raise Skip(f"trl {_version('trl')} has no VLLMClient (server mode came in trl 0.17)") from None
    return VLLMClient


def _wait_healthy(server: Any, port: int, log: str, seconds: float) -> None:
    """Until the server answers /health (vLLM's server, TRL 1.x) or /health/ (TRL's own, before); a server that
    exits first fails with its last lines."""
    import urllib.error
    import urllib.request

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if server.poll() is not None:
            raise RuntimeError(f"trl vllm-serve exited {server.returncode} before answering:\n" + _tail(log))
        for route in ("/health", "/health/"):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{route}", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
        time.sleep(2)
    raise TimeoutError(f"trl vllm-serve did not answer within {seconds:g} s:\n" + _tail(log))


def _tail(path: str, lines: int = 30) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def _serve_server(path: str) -> None:
    """`trl vllm-serve` on the tiny model in a process of its own, then VLLMClient's generate twice."""
    import subprocess

    with step("trl vllm-serve + VLLMClient") as detail:
        if _version("trl") is None:
            raise Skip("trl is not installed")
        client_cls = _vllm_client()
        port = _free_port()
        trl_script = os.path.join(os.path.dirname(sys.executable), "trl")
        argv = [trl_script] if os.path.exists(trl_script) else [sys.executable, "-m", "trl.cli.main"]
        argv += ["vllm-serve", "--model", path, "--host", "127.0.0.1", "--port", str(port),
                 "--gpu_memory_utilization", "0.2", "--max_model_len", "128", "--enforce_eager", "true"]
        log = os.path.join(os.getcwd(), "vllm-serve.log")
        with open(log, "w", encoding="utf-8") as out:
            server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True)
        answered = False
        try:
            _wait_healthy(server, port, log, 240.0)
            client = client_cls(**_fitting(client_cls, {
                "base_url": f"http://127.0.0.1:{port}", "host": "127.0.0.1", "server_port": port,
                "group_port": _free_port(), "connection_timeout": 30.0}))
            for _ in (1, 2):
                got = client.generate(["hello world"], max_tokens=8)
                # trl 1.x returns a dict (completion_ids, logprobs, ...), earlier releases the completion ids
                ids = got.get("completion_ids") if isinstance(got, dict) else got
                if not ids:
                    raise RuntimeError(f"VLLMClient.generate returned no completion: {got!r}"[:300])
            answered = True
        finally:
            if not answered:
                sys.stderr.write(_tail(log))  # the server's own words, for explain
            import signal

            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(server.pid, signal.SIGKILL)
        detail.append(f"trl {_version('trl')}, vllm {_version('vllm')}, 2 generations")


def _serve_colocate(path: str) -> None:
    """Two GRPO steps generating with vLLM inside the trainer's process (vllm_mode="colocate")."""
    with step("grpo vllm colocate") as detail:
        if _version("trl") is None:
            raise Skip("trl is not installed")
        import trl
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if "vllm_mode" not in inspect.signature(trl.GRPOConfig).parameters:
            raise Skip(f"trl {_version('trl')} has no vllm_mode (colocate came in trl 0.18)")
        tok = AutoTokenizer.from_pretrained(path)
        model = AutoModelForCausalLM.from_pretrained(path)
        args = _config(trl.GRPOConfig, os.path.join(os.getcwd(), "out-colocate"), num_generations=2,
                       max_completion_length=8, max_prompt_length=16, generation_batch_size=2, temperature=1.0,
                       use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=0.2,
                       vllm_max_model_length=128, vllm_max_model_len=128, vllm_enable_sleep_mode=True)
        trainer = _trainer(trl.GRPOTrainer, model=model, args=args, train_dataset=_data("grpo"), tokenizer=tok,
                           reward_funcs=_reward)
        result = trainer.train()
        if getattr(trainer.state, "global_step", 0) != 2:
            raise RuntimeError(f"grpo with vLLM colocate ran {trainer.state.global_step} steps, not 2")
        detail.append(f"trl {_version('trl')}, vllm {_version('vllm')}, 2 steps, loss {result.training_loss:.3f}")


# ----------------------------------------------------------------------------- train


def _fitting(cls: Callable[..., Any], values: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments `cls` takes: option names come and go between TRL releases."""
    params = inspect.signature(cls).parameters
    return {k: v for k, v in values.items() if k in params}


def _config(cls: Callable[..., Any], out: str, **extra: Any) -> Any:
    import torch

    values: dict[str, Any] = {
        "output_dir": out, "max_steps": 2, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1,
        "learning_rate": 1e-3, "logging_steps": 1, "save_strategy": "no", "report_to": "none",
        "use_cpu": not torch.cuda.is_available(), "bf16": False, "fp16": False, "dataloader_num_workers": 0,
        "disable_tqdm": True, "seed": 0, **extra,
    }
    return cls(**_fitting(cls, values))


def _trainer(cls: Callable[..., Any], **values: Any) -> Any:
    tokenizer = values.pop("tokenizer")
    params = inspect.signature(cls).parameters
    values["processing_class" if "processing_class" in params else "tokenizer"] = tokenizer
    return cls(**{k: v for k, v in values.items() if k in params or k == "args"})


def _data(kind: str) -> Any:
    from datasets import Dataset

    prompts = ["the quick brown fox", "a cat sat on the mat", "hello world", "one two three"]
    if kind == "sft":
        return Dataset.from_dict({"messages": [[{"role": "user", "content": p},
                                                {"role": "assistant", "content": "yes good answer"}] for p in prompts]})
    if kind == "dpo":
        return Dataset.from_dict({"prompt": prompts, "chosen": [" yes good"] * 4, "rejected": [" no bad"] * 4})
    return Dataset.from_dict({"prompt": prompts})


def _reward(completions: list[Any], **kwargs: Any) -> list[float]:
    return [float(len(str(c))) for c in completions]


def _online_dpo_classes() -> tuple[Any, Any]:
    """OnlineDPOTrainer and its config: top-level in TRL before 1.0, trl.experimental.online_dpo since."""
    import trl

    if hasattr(trl, "OnlineDPOTrainer"):
        return trl.OnlineDPOTrainer, getattr(trl, "OnlineDPOConfig")  # noqa: B009  (trl before 1.0; mypy reads 1.x)
    try:
        from trl.experimental.online_dpo import OnlineDPOConfig, OnlineDPOTrainer
    except ImportError:
        raise Skip(f"trl {_version('trl')} has no OnlineDPOTrainer (neither trl nor trl.experimental.online_dpo)") from None
    return OnlineDPOTrainer, OnlineDPOConfig


def _online_dpo(model: Any, tok: Any, out: str, peft_config: Any) -> Any:
    """Online DPO scores its own generations: a random one-label classifier on the tiny model's config is the reward
    model, built in memory. TRL took it as `reward_model` (with `reward_processing_class`), later as `reward_funcs`."""
    from transformers import AutoModelForSequenceClassification

    trainer_cls, config_cls = _online_dpo_classes()
    labels = {k: v for k, v in model.config.to_dict().items() if k not in ("id2label", "label2id")}
    reward_config = model.config.__class__.from_dict({**labels, "num_labels": 1})
    reward = AutoModelForSequenceClassification.from_config(reward_config)
    args = _config(config_cls, out, max_new_tokens=8, max_length=32, beta=0.1, temperature=1.0)
    params = inspect.signature(trainer_cls).parameters
    if "reward_funcs" in params:
        judge: dict[str, Any] = {"reward_funcs": [reward], "reward_processing_classes": [tok]}
    else:
        judge = {"reward_model": reward, "reward_processing_class": tok}
    return _trainer(trainer_cls, model=model, args=args, train_dataset=_data("online-dpo"), tokenizer=tok,
                    peft_config=peft_config, **judge)


def _train_one(kind: str, model_path: str, out: str, lora: bool) -> Any:
    import trl
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path)
    peft_config = None
    if lora:
        from peft import LoraConfig

        peft_config = LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    if kind == "sft":
        args = _config(trl.SFTConfig, out, max_length=32, max_seq_length=32, packing=False)
        trainer = _trainer(trl.SFTTrainer, model=model, args=args, train_dataset=_data("sft"), tokenizer=tok,
                           peft_config=peft_config)
    elif kind == "dpo":
        args = _config(trl.DPOConfig, out, max_length=32, max_prompt_length=16, beta=0.1)
        trainer = _trainer(trl.DPOTrainer, model=model, args=args, train_dataset=_data("dpo"), tokenizer=tok,
                           peft_config=peft_config)
    elif kind == "grpo":
        args = _config(trl.GRPOConfig, out, num_generations=2, max_completion_length=8, max_prompt_length=16,
                       generation_batch_size=2, temperature=1.0)
        trainer = _trainer(trl.GRPOTrainer, model=model, args=args, train_dataset=_data("grpo"), tokenizer=tok,
                           reward_funcs=_reward, peft_config=peft_config)
    elif kind == "online-dpo":
        trainer = _online_dpo(model, tok, out, peft_config)
    else:
        raise Skip(f"no built-in two-step run for trainer {kind!r} yet")
    result = trainer.train()
    if getattr(trainer.state, "global_step", 0) != 2:
        raise RuntimeError(f"{kind} ran {trainer.state.global_step} steps, not 2")
    return trainer, result


def _launched_settings(accelerator: Any, expected: str | None) -> str:
    """What of the launch's variables the Trainer's accelerator ran with, beyond the defaults: a launch that asked for
    a mixed precision the accelerator did not use fails (DeepSpeed's engine keeps its own precision: not compared)."""
    if accelerator is None:  # a Trainer from before accelerate: nothing to compare
        return ""
    asked = os.environ.get("ACCELERATE_MIXED_PRECISION")
    ran = str(getattr(accelerator, "mixed_precision", None) or "no")
    if asked and expected != "DEEPSPEED" and ran != asked:
        raise RuntimeError(f"accelerate ran mixed precision {ran}, the launch asked for {asked}")
    debug = getattr(getattr(accelerator, "state", None), "debug", False)
    return (f", mixed precision {ran}" if ran != "no" else "") + (", debug mode" if debug else "")


def stage_train(args: list[str]) -> None:
    """ARGS: the trainers (sft, dpo, grpo, online-dpo), then --lora to add a LoRA variant of the first, --launched under
    a launcher (--launcher=torchrun when torchrun started it), --distributed=KIND for the sharding the launch config
    asks for."""
    trainers = [a for a in args if not a.startswith("--")]
    launched = "--launched" in args
    # --distributed=FSDP|DEEPSPEED: the user's config shards the model; the run must really have used it.
    expected = next((a.partition("=")[2] for a in args if a.startswith("--distributed=")), None)
    where = os.getcwd()
    # --launcher=torchrun: torchrun started the ranks; accelerate's state reads the RANK/WORLD_SIZE/LOCAL_RANK it set.
    launcher = next((a.partition("=")[2] for a in args if a.startswith("--launcher=")), "accelerate launch")
    prefix = f"{launcher} x{os.environ.get('WORLD_SIZE', '?')}: " if launched else ""
    with step(prefix + "tiny model") as detail:
        # Under a launcher every rank builds the same files: each into its own folder.
        path = tiny_model(os.path.join(where, f"rank{_rank()}") if launched else where)
        detail.append("Llama, 2 layers, hidden 16, word-level tokenizer")
    if FAILED:
        return
    with step(prefix + "import trl") as detail:
        import trl  # noqa: F401

        detail.append(f"trl {_version('trl')}, transformers {_version('transformers')}, accelerate {_version('accelerate')}")
    if FAILED:
        return
    saved: Any = None
    for kind in trainers:
        with step(prefix + kind) as detail:
            trainer, result = _train_one(kind, path, os.path.join(where, f"out-{kind}"), lora=False)
            accelerator = getattr(trainer, "accelerator", None)
            processes = getattr(accelerator, "num_processes", 1)
            ran = getattr(getattr(accelerator, "distributed_type", None), "value", None)
            if launched and str(processes) != os.environ.get("WORLD_SIZE"):
                raise RuntimeError(f"accelerate ran {processes} process(es), {launcher} started {os.environ.get('WORLD_SIZE')}")
            if expected and ran != expected:
                raise RuntimeError(f"accelerate ran {ran}, the launch config asked for {expected}")
            ran_as = f", {processes} processes, {ran}{_launched_settings(accelerator, expected)}" if launched else ""
            detail.append(f"2 steps, loss {result.training_loss:.3f}{ran_as}")
            if kind == trainers[0] and not launched:
                saved = trainer
    if launched:
        return  # a launched rank ends in `_end` (no finalizers)
    if saved is None:
        return
    with step(f"save and reload ({trainers[0]})"):
        from transformers import AutoModelForCausalLM

        target = os.path.join(where, "saved")
        saved.save_model(target)
        again = AutoModelForCausalLM.from_pretrained(target)
        tok = getattr(saved, "processing_class", None) or saved.tokenizer
        again(**tok("hello world", return_tensors="pt"))
    if "--lora" in args:
        with step(f"{trainers[0]}+lora") as detail:
            if _version("peft") is None:
                raise Skip("peft is not installed")
            trainer, result = _train_one(trainers[0], path, os.path.join(where, "out-lora"), lora=True)
            target = os.path.join(where, "saved-lora")
            trainer.save_model(target)
            from peft import AutoPeftModelForCausalLM

            AutoPeftModelForCausalLM.from_pretrained(target)
            detail.append(f"peft {_version('peft')}, 2 steps, saved and reloaded")


STAGES: dict[str, Callable[[list[str]], None]] = {
    "import": stage_import, "device": stage_device, "collective": stage_collective, "kernels": stage_kernels,
    "serve": stage_serve, "train": stage_train,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in STAGES:
        sys.stderr.write(f"usage: child.py {{{','.join(STAGES)}}} [ARGS]\n")
        return 2
    STAGES[argv[0]](argv[1:])
    return 1 if FAILED else 0


def _end(code: int) -> None:
    """Leave the process. A rank a launcher started (torchrun or `accelerate launch` set LOCAL_RANK) leaves without
    finalizers once its steps are printed: tearing its gloo group down after the peer has left waits for ever (the DDP
    reducer's group joins a run-loop thread no peer will wake) or aborts (SIGABRT), neither of which is the stack
    failing, and no barrier helps when the peer failed or already left."""
    if "LOCAL_RANK" not in os.environ:
        sys.exit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _end(main(sys.argv[1:]))
