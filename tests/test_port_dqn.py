"""Port test: the reinforcement-learning (DQN) tutorial, with CartPole written out in the
program (gym's physics: Euler steps of the cart and pole equations, terminated when the pole
leans past 12 degrees or the cart leaves the track) in place of `gym.make`.

The tutorial's code as written: a `namedtuple` Transition, a `deque` replay memory sampled with
`random.sample`, epsilon-greedy actions with `math.exp` decay and `.max(1).indices.view(1, 1)`,
the batch regrouped with `Transition(*zip(*transitions))`, a boolean mask for non-final next
states assigned into a zeros tensor, `gather`, `SmoothL1Loss`, `AdamW(amsgrad=True)`,
`clip_grad_value_` and the soft target update through `state_dict()` and `load_state_dict`.
Sizes are cut down (a smaller network, batches of 16, four episodes).

Run by PyTorch and by minigrad (passed in as `torch`) from the same weights and the same
seeds of `random` and of the environment: the actions taken, the episode lengths, every loss
and the final networks must agree."""
import math
import random
from collections import deque, namedtuple
from itertools import count

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


class CartPole:
    """gym's CartPole-v1: the state (x, x_dot, theta, theta_dot), actions 0 (push left) and
    1 (push right), reward 1 per step."""
    gravity, masscart, masspole, length, force_mag, tau = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
    theta_threshold, x_threshold = 12 * 2 * math.pi / 360, 2.4

    def __init__(self, seed):
        self.np_random = np.random.RandomState(seed)
        self.state = None
        self.n_actions = 2

    def reset(self):
        self.state = self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
        return np.array(self.state, dtype=np.float32), {}

    def sample_action(self):
        return int(self.np_random.randint(self.n_actions))

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        total_mass = self.masspole + self.masscart
        polemass_length = self.masspole * self.length
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + polemass_length * theta_dot ** 2 * sintheta) / total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / total_mass))
        xacc = temp - polemass_length * thetaacc * costheta / total_mass
        x, x_dot = x + self.tau * x_dot, x_dot + self.tau * xacc
        theta, theta_dot = theta + self.tau * theta_dot, theta_dot + self.tau * thetaacc
        self.state = (x, x_dot, theta, theta_dot)
        terminated = bool(abs(x) > self.x_threshold or abs(theta) > self.theta_threshold)
        return np.array(self.state, dtype=np.float32), 1.0, terminated, False, {}


def dqn_program(torch, init=None, num_episodes=4):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    env = CartPole(seed=42)
    random.seed(0)
    torch.manual_seed(0)

    Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))

    class ReplayMemory(object):
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            """Save a transition"""
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            return random.sample(self.memory, batch_size)

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super(DQN, self).__init__()
            self.layer1 = nn.Linear(n_observations, 32)
            self.layer2 = nn.Linear(32, 32)
            self.layer3 = nn.Linear(32, n_actions)

        # Called with either one element to determine next action, or a batch
        # during optimization. Returns tensor([[left0exp,right0exp]...]).
        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    BATCH_SIZE = 16
    GAMMA = 0.99
    EPS_START = 0.9
    EPS_END = 0.01
    EPS_DECAY = 40
    TAU = 0.005
    LR = 3e-4

    n_actions = env.n_actions
    state, info = env.reset()
    n_observations = len(state)

    policy_net = DQN(n_observations, n_actions).to(device)
    target_net = DQN(n_observations, n_actions).to(device)
    if init is not None:
        policy_net.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(policy_net)
    target_net.load_state_dict(policy_net.state_dict())

    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(10000)

    steps_done = 0
    actions, losses = [], []

    def select_action(state):
        nonlocal steps_done
        sample = random.random()
        eps_threshold = EPS_END + (EPS_START - EPS_END) * \
            math.exp(-1. * steps_done / EPS_DECAY)
        steps_done += 1
        if sample > eps_threshold:
            with torch.no_grad():
                # t.max(1) will return the largest column value of each row.
                return policy_net(state).max(1).indices.view(1, 1)
        else:
            return torch.tensor([[env.sample_action()]], device=device, dtype=torch.long)

    episode_durations = []

    def optimize_model():
        if len(memory) < BATCH_SIZE:
            return
        transitions = memory.sample(BATCH_SIZE)
        # Transpose the batch: a Transition of batch-arrays from a batch of Transitions.
        batch = Transition(*zip(*transitions))

        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                      device=device, dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)

        state_action_values = policy_net(state_batch).gather(1, action_batch)

        next_state_values = torch.zeros(BATCH_SIZE, device=device)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch

        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))

        optimizer.zero_grad()
        loss.backward()
        # In-place gradient clipping
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        losses.append(loss.item())

    for i_episode in range(num_episodes):
        state, info = env.reset()
        state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        for t in count():
            action = select_action(state)
            actions.append(action.item())
            observation, reward, terminated, truncated, _ = env.step(action.item())
            reward = torch.tensor([reward], device=device)
            done = terminated or truncated

            if terminated:
                next_state = None
            else:
                next_state = torch.tensor(observation, dtype=torch.float32,
                                          device=device).unsqueeze(0)

            memory.push(state, action, next_state, reward)
            state = next_state
            optimize_model()

            # Soft update of the target network's weights
            # θ′ ← τ θ + (1 −τ )θ′
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = policy_net_state_dict[key] * TAU + \
                    target_net_state_dict[key] * (1 - TAU)
            target_net.load_state_dict(target_net_state_dict)

            if done:
                episode_durations.append(t + 1)
                break

    durations_t = torch.tensor(episode_durations, dtype=torch.float)
    return {"init": start, "actions": actions, "durations": episode_durations,
            "losses": losses, "mean_duration": durations_t.mean().item(),
            "policy": state_numpy(policy_net), "target": state_numpy(target_net),
            "reward_dtype": str(reward.dtype), "steps_done": steps_done}


def test_dqn_tutorial_on_cartpole(torch):
    expected, got = run_both(dqn_program, torch)
    assert got["actions"] == expected["actions"]
    assert got["durations"] == expected["durations"]
    assert got["steps_done"] == expected["steps_done"] == len(expected["actions"])
    assert got["reward_dtype"].split(".")[-1] == expected["reward_dtype"].split(".")[-1]
    assert got["mean_duration"] == expected["mean_duration"]
    assert len(expected["losses"]) > 20  # the replay memory filled and training ran
    assert_curves_match("dqn", expected["losses"], got["losses"], rtol=2e-5)
    for net in ("policy", "target"):
        for k, v in expected[net].items():
            np.testing.assert_allclose(got[net][k], v, rtol=1e-5, atol=1e-6, err_msg=f"{net} {k}")
